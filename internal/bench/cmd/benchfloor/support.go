package main

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/einvoice"
)

// invoiceRequest is the part of the contract's SimplifiedInvoiceRequest the driver sends.
type invoiceRequest struct {
	OrganizationID     uuid.UUID `json:"organization_id"`
	TaxCalculationMode string    `json:"tax_calculation_mode"`
	RequestedType      string    `json:"requested_invoice_type"`
	Seller             struct {
		LegalName              string  `json:"legal_name"`
		VATNumber              string  `json:"vat_number"`
		CommercialRegistration *string `json:"commercial_registration"`
		Address                *struct {
			StreetName     *string `json:"street_name"`
			BuildingNumber *string `json:"building_number"`
			District       *string `json:"district"`
			City           *string `json:"city"`
			PostalCode     *string `json:"postal_code"`
			CountryCode    string  `json:"country_code"`
		} `json:"address"`
	} `json:"seller"`
	Lines []struct {
		ID          string  `json:"line_id"`
		NameEn      string  `json:"name_en"`
		Quantity    float64 `json:"quantity"`
		UnitCode    string  `json:"unit_code"`
		UnitPrice   int64   `json:"unit_price"`
		TaxCategory string  `json:"tax_category"`
		TaxRate     float64 `json:"tax_rate"`
	} `json:"line_items"`
}

func (in *invoiceRequest) einvoice() einvoice.Request {
	r := einvoice.Request{
		TaxCalculationMode: in.TaxCalculationMode,
		RequestedType:      in.RequestedType,
		Seller: einvoice.Seller{
			LegalName: in.Seller.LegalName, VATNumber: in.Seller.VATNumber,
			CommercialRegistration: in.Seller.CommercialRegistration,
		},
	}
	if a := in.Seller.Address; a != nil {
		r.Seller.Address = &einvoice.Address{
			StreetName: a.StreetName, BuildingNumber: a.BuildingNumber, District: a.District,
			City: a.City, PostalCode: a.PostalCode, CountryCode: a.CountryCode,
		}
	}
	for _, l := range in.Lines {
		r.Lines = append(r.Lines, einvoice.Line{
			ID: l.ID, NameEn: l.NameEn, Quantity: l.Quantity, UnitCode: l.UnitCode,
			UnitPrice: l.UnitPrice, TaxCategory: l.TaxCategory, TaxRate: l.TaxRate,
		})
	}
	return r
}

// groupCommit is the API's growth-event writer in its simplest form: one goroutine COPYs
// whatever queued while the previous COPY ran, and acknowledges each event once stored.
type groupCommit struct {
	queue chan pending
}

type pending struct {
	row dbq.GrowthEventInsertBatchParams
	ack chan error
}

const groupCommitMax = 1_000 // the API's growthEventMaxBatch

func newGroupCommit(pool *pgxpool.Pool) *groupCommit {
	g := &groupCommit{queue: make(chan pending, 4_096)}
	go func() {
		q := dbq.New(pool)
		for first := range g.queue {
			batch := []pending{first}
		more:
			for len(batch) < groupCommitMax {
				select {
				case p := <-g.queue:
					batch = append(batch, p)
				default:
					break more
				}
			}
			rows := make([]dbq.GrowthEventInsertBatchParams, len(batch))
			for i, p := range batch {
				rows[i] = p.row
			}
			_, err := q.GrowthEventInsertBatch(context.Background(), rows)
			for _, p := range batch {
				p.ack <- err
			}
		}
	}()
	return g
}

func (g *groupCommit) submit(ctx context.Context, row dbq.GrowthEventInsertBatchParams) error {
	p := pending{row: row, ack: make(chan error, 1)}
	select {
	case g.queue <- p:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := <-p.ack; err != nil {
		return errors.Join(errors.New("growth events"), err)
	}
	return nil
}
