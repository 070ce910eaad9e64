-- +goose Up
-- Invoices become resources that are paid, voided or written off (issue 25).
--
-- amount_paid is what succeeded payments applied; the CHECK makes overpaying impossible
-- whatever interleaving of payments commits. The status CHECKs say what each payment state
-- means, so no code path can store a paid invoice without paid_at or with money still due.
-- opens_selection marks the first invoice of a plan selection (select-plan issued it):
-- paying it activates the selection. Every invoice stored so far came from select-plan.
ALTER TABLE billing_invoices
    ADD COLUMN amount_paid     bigint  NOT NULL DEFAULT 0,
    ADD COLUMN opens_selection boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT billing_invoices_amount_paid CHECK (amount_paid >= 0 AND amount_paid <= total),
    ADD CONSTRAINT billing_invoices_paid CHECK ((status = 'paid') = (paid_at IS NOT NULL)),
    ADD CONSTRAINT billing_invoices_paid_in_full CHECK (status <> 'paid' OR amount_paid = total),
    ADD CONSTRAINT billing_invoices_partially_paid CHECK (status <> 'partially_paid' OR (amount_paid > 0 AND amount_paid < total)),
    ADD CONSTRAINT billing_invoices_void_unpaid CHECK (status <> 'void' OR amount_paid = 0);

UPDATE billing_invoices SET opens_selection = true;

-- The lines of the invoices stored so far gain what a line shows (period, quantity, unit
-- amount, tax, price component, proration). The tax of line n is the VAT of the running net
-- amount through line n less that through line n - 1 (both rounded half-up, as the invoice's
-- tax is), so the lines' taxes add up to the invoice's tax exactly. Charges come before
-- discounts, which never exceed them, so every running amount is >= 0.
UPDATE billing_invoices i SET lines = coalesce((
    SELECT jsonb_agg(e.line || jsonb_build_object(
               'price_id', NULL,
               'period_start', to_char(i.period_start, 'YYYY-MM-DD"T00:00:00Z"'),
               'period_end', to_char(i.period_end, 'YYYY-MM-DD"T00:00:00Z"'),
               'quantity', 1,
               'unit_amount', e.amount,
               'tax', (e.running * r.percent + 50) / 100 - ((e.running - e.amount) * r.percent + 50) / 100,
               'proration', false) ORDER BY e.n)
    FROM (SELECT x.line, x.n, (x.line->>'amount')::bigint AS amount,
                 (sum((x.line->>'amount')::bigint) OVER (ORDER BY x.n))::bigint AS running
          FROM jsonb_array_elements(i.lines) WITH ORDINALITY AS x(line, n)) e,
         (SELECT CASE WHEN i.currency = 'SAR' THEN 15 ELSE 0 END AS percent) r
), '[]'::jsonb);

CREATE INDEX billing_invoices_organization ON billing_invoices (organization_id, id);

-- Payments of billing invoices (sandbox: the payment method is a test token). A failed
-- payment is recorded with why it failed and applies nothing.
CREATE TABLE billing_payments (
    id              uuid        PRIMARY KEY,
    created_at      timestamptz NOT NULL,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    invoice_id      uuid        NOT NULL REFERENCES billing_invoices (id),
    amount          bigint      NOT NULL CHECK (amount >= 0),
    currency        text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    payment_method  text        NOT NULL CHECK (payment_method IN ('pm_sandbox_success', 'pm_sandbox_declined', 'pm_sandbox_insufficient_funds')),
    status          text        NOT NULL CHECK (status IN ('succeeded', 'failed')),
    failure_code    text        CHECK (failure_code IN ('card_declined', 'insufficient_funds')),
    failure_message text,
    CHECK ((status = 'failed') = (failure_code IS NOT NULL)),
    CHECK ((failure_code IS NULL) = (failure_message IS NULL))
);

CREATE INDEX billing_payments_organization ON billing_payments (organization_id, id);
CREATE INDEX billing_payments_invoice ON billing_payments (organization_id, invoice_id, id);

-- +goose Down
DROP TABLE billing_payments;
DROP INDEX billing_invoices_organization;
ALTER TABLE billing_invoices
    DROP CONSTRAINT billing_invoices_void_unpaid,
    DROP CONSTRAINT billing_invoices_partially_paid,
    DROP CONSTRAINT billing_invoices_paid_in_full,
    DROP CONSTRAINT billing_invoices_paid,
    DROP CONSTRAINT billing_invoices_amount_paid,
    DROP COLUMN opens_selection,
    DROP COLUMN amount_paid;
