package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// listScope is the organization filter of a list query from the caller and an optional
// organization_id query parameter: the named organization (its own, for an organization
// principal), else the caller's own, else (the operator naming none) nil for every one.
// A cursor, when given, is decoded too.
func listScope(ctx context.Context, organizationID *uuid.UUID, cursor *string) (org, after *uuid.UUID, err error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case organizationID != nil:
		if err := p.ActsFor(*organizationID, "organization_id"); err != nil {
			return nil, nil, err
		}
		org = organizationID
	case !p.IsOperator():
		org = &p.OrganizationID
	}
	if after, err = afterCursor(cursor); err != nil {
		return nil, nil, err
	}
	return org, after, nil
}

// organizationExists checks, inside a transaction, that the organization an operator named
// exists (EUnprocessable otherwise).
func organizationExists(ctx context.Context, q *dbq.Queries, id uuid.UUID) error {
	_, err := q.OrganizationGetByID(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return core.Errorf(core.EUnprocessable, "Organization %s does not exist.", id)
	}
	return err
}

// owned reads a row of a tenant-owned table for the caller: an organization principal through
// own, whose SQL filters on its organization (another organization's row is not found, and a
// FOR UPDATE does not lock it); the operator through anyOrganization. A row not found is
// ENotFound with the message what formats with id.
func owned[T any](ctx context.Context, own func(org uuid.UUID) (T, error), anyOrganization func() (T, error), what string, id uuid.UUID) (T, error) {
	var row T
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return row, err
	}
	if p.IsOperator() {
		row, err = anyOrganization()
	} else {
		row, err = own(p.OrganizationID)
	}
	if err != nil {
		return row, notFoundAs(err, what+" %s does not exist.", id)
	}
	return row, nil
}

// parseCursor reads a next_cursor handed out by page.
func parseCursor(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, &core.Error{Code: core.EValidation, Message: "The cursor is not one this API returned.",
			Fields: []core.FieldError{{Location: "query", Pointer: "cursor", Code: "format", Message: "Pass next_cursor of the previous page."}}}
	}
	return id, nil
}

// afterCursor reads an optional next_cursor: the id after which the page starts, or nil for
// the first page.
func afterCursor(cursor *string) (*uuid.UUID, error) {
	if cursor == nil {
		return nil, nil
	}
	after, err := parseCursor(*cursor)
	if err != nil {
		return nil, err
	}
	return &after, nil
}

// orLeast is the cursor after, or the least id for the first page of a list in id order:
// a bound that is never NULL in SQL, so that an index serves it in a generic plan too.
func orLeast(after *uuid.UUID) uuid.UUID {
	if after == nil {
		return uuid.Nil
	}
	return *after
}

// keyRange is the range [floor, before) of a newest-first list's key that one page walks.
// Neither end is ever NULL in SQL, so that a cached generic plan bounds the walk as a custom
// plan does.
type keyRange struct {
	before, floor uuid.UUID
	// cut: the floor is a row of the list, core.FilterScanRows below before, and the list
	// may go on below it.
	cut bool
}

// pageRange is the range a page below the cursor after (nil: the first page) walks. A page
// that filters nothing takes the whole key below the cursor, its LIMIT bounds it; a filtered
// one stops at core.FilterScanRows rows (docs/design.md, "Lists"), at the floor floorAt reads
// given the rows to skip.
func pageRange(after *uuid.UUID, filtered bool, floorAt func(before uuid.UUID, skip int32) (uuid.UUID, error)) (keyRange, error) {
	r := keyRange{before: uuid.Max, floor: uuid.Nil}
	if after != nil {
		r.before = *after
	}
	if !filtered {
		return r, nil
	}
	floor, err := floorAt(r.before, core.FilterScanRows-1)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // fewer rows remain than the bound
		return r, nil
	case err != nil:
		return r, translate(err)
	}
	r.floor, r.cut = floor, true
	return r, nil
}

// windowPage is page for a page that walked r: when the walk was cut and found less than a
// page, the next page continues below the floor, so a page may hold fewer items than limit,
// or none, and still have a next_cursor.
func windowPage[T any](items []T, limit int, idOf func(T) uuid.UUID, r keyRange) ([]T, *string) {
	items, next := page(items, limit, idOf)
	if next == nil && r.cut {
		s := r.floor.String()
		next = &s
	}
	return items, next
}

// page trims a result fetched with limit+1 rows to limit and returns the cursor of the next
// page: the id of the last item returned, or nil on the last page.
func page[T any](items []T, limit int, idOf func(T) uuid.UUID) ([]T, *string) {
	if len(items) <= limit {
		return items, nil
	}
	items = items[:limit]
	next := idOf(items[limit-1]).String()
	return items, &next
}
