// A TypeScript consumer of the Provider Core API: openapi-fetch over the types that
// openapi-typescript generates from openapi/openapi.yaml (src/schema.d.ts, made by
// `npm run generate`). `make check-ts` type-checks it, so a change to the document that
// breaks TypeScript consumers fails CI. It is compiled, not run.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type Organization = components["schemas"]["Organization"];
type Problem = components["schemas"]["Problem"];

const productEinvoice = "0193a000-0000-7000-8000-000000000001";
const planGrowthMonthly = "0193a000-0000-7000-8000-000000000101";

function describe(problem: Problem): string {
  const fields = (problem.errors ?? []).map((e) => `${e.pointer}: ${e.code}`).join(", ");
  return `${problem.status} ${problem.code}: ${problem.detail}${fields ? ` (${fields})` : ""}`;
}

export async function quickstart(baseUrl: string, operatorToken: string): Promise<string> {
  const operator = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${operatorToken}` } });

  const org = await operator.POST("/v1/organizations", {
    body: {
      legal_name_ar: "شركة المثال",
      legal_name_en: "Example Co",
      display_name: "Example",
      organization_type: "standard_customer",
      country: "SA",
    },
  });
  if (org.error) throw new Error(describe(org.error));
  const organization: Organization = org.data;

  const key = await operator.POST("/v1/api-keys", {
    params: { header: { "Idempotency-Key": `key-${organization.id}` } },
    body: {
      organization_id: organization.id,
      name: "typescript backend",
      environment: "sandbox",
      scopes: ["subscriptions:read", "subscriptions:write", "invoice:generate", "address:read"],
    },
  });
  if (key.error) throw new Error(describe(key.error));

  const token = await createClient<paths>({ baseUrl }).POST("/v1/oauth/token", {
    body: { grant_type: "client_credentials", client_id: key.data.prefix, client_secret: key.data.secret },
  });
  if (token.error) throw new Error(describe(token.error));
  const customer = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token.data.access_token}` } });

  const sub = await customer.POST("/v1/subscriptions", {
    body: { organization_id: organization.id, product_id: productEinvoice, plan_id: planGrowthMonthly },
  });
  if (sub.error) throw new Error(describe(sub.error));
  // The product's operations wait for provisioning (403 subscription_inactive until then).
  let current = await customer.GET("/v1/subscriptions/{id}", { params: { path: { id: sub.data.id } } });
  for (let tries = 0; current.data?.service_status === "provisioning" && tries < 50; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    current = await customer.GET("/v1/subscriptions/{id}", { params: { path: { id: sub.data.id } } });
  }
  if (current.error) throw new Error(describe(current.error));
  const status: "provisioning" | "active" | "degraded" | "suspended" | "terminated" = current.data.service_status;

  const selection = await customer.POST("/v1/subscriptions/{id}/select-plan", {
    params: { path: { id: sub.data.id } },
    body: { plan_id: planGrowthMonthly },
  });
  if (selection.error) throw new Error(describe(selection.error));
  const total: number | undefined = selection.data.invoice?.total;

  const invoice = await customer.POST("/v1/taxauth/invoices/generate/simplified", {
    body: {
      organization_id: organization.id,
      tax_calculation_mode: "service_calculated",
      requested_invoice_type: "simplified_tax_invoice",
      seller: { legal_name: "Example Co", vat_number: "310123456700003" },
      line_items: [
        { line_id: "1", name_en: "Coffee", quantity: 2, unit_code: "PCE", unit_price: 4500, tax_category: "S", tax_rate: 15 },
      ],
    },
  });
  if (invoice.error) throw new Error(describe(invoice.error));
  const icv: number = invoice.data.invoice.identity.icv;

  const address = await customer.POST("/v1/address/resolve-short", {
    body: { short_address: "RRRD2929", language: "ar" },
  });
  if (address.error) throw new Error(describe(address.error));
  const missing: string[] = address.data.missing_fields;

  return `${organization.id} ${status} ${total ?? 0} ${icv} ${missing.join(",")}`;
}
