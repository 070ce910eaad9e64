package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// organizationFor resolves an organization id sent in a body or query to the organization
// the caller acts for. field names it: a JSON pointer ("/organization_id") for a body field,
// the parameter name for a query parameter. An organization principal may only name its
// own: anything else is EForbidden, never a success.
func organizationFor(p *core.Principal, raw, field string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if p.IsOperator() {
		if err != nil {
			return uuid.Nil, core.Errorf(core.EUnprocessable, "Organization %q does not exist.", raw)
		}
		return id, nil
	}
	if err != nil || id != p.OrganizationID {
		location := "query"
		if strings.HasPrefix(field, "/") {
			location = "body"
		}
		return uuid.Nil, &core.Error{Code: core.EForbidden,
			Message: "The credential may only act for its own organization.",
			Fields:  []core.FieldError{{Location: location, Pointer: field, Code: "forbidden", Message: "Not the caller's organization."}}}
	}
	return id, nil
}

// listScope is the organization filter of a list query from the caller and an optional
// organization_id query parameter: the named organization (its own, for an organization
// principal), else the caller's own, else (the operator naming none) nil for every one.
// A cursor, when given, is decoded too.
func listScope(ctx context.Context, organizationID, cursor *string) (org, after *uuid.UUID, err error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case organizationID != nil:
		id, err := organizationFor(p, *organizationID, "organization_id")
		if err != nil {
			return nil, nil, err
		}
		org = &id
	case !p.IsOperator():
		org = &p.OrganizationID
	}
	if cursor != nil {
		c, err := parseCursor(*cursor)
		if err != nil {
			return nil, nil, err
		}
		after = &c
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

// visible answers ENotFound, exactly as for a missing resource, when the caller may not see
// a resource of organization owner.
func visible(ctx context.Context, owner uuid.UUID, what string, id uuid.UUID) error {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return err
	}
	if !p.CanAccessOrganization(owner) {
		return core.Errorf(core.ENotFound, "%s %s does not exist.", what, id)
	}
	return nil
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
