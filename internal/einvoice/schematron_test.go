package einvoice_test

import (
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/einvoice"
)

// The official rule files are not part of this repository (they are the tax authority's, under
// their own licence): TestOfficialRules runs them only when a developer points at a copy.
const officialRulesHelp = `set ZATCA_RULES_DIR to the folder holding the official compiled rule files ` +
	`(the ZATCA SDK's Data/Rules/schematrons: 20210819_ZATCA_E-invoice_Validation_Rules.xsl and CEN-EN16931-UBL.xsl) ` +
	`and install Saxon-HE (apt-get install libsaxonhe-java; SAXON_JAR names another jar), then run make check-schematron ` +
	`(docs/einvoice-rules.md)`

// TestOfficialRules generates a representative set of invoices and runs every *.xsl file of
// ZATCA_RULES_DIR over them with Saxon. A failed assert of flag error or fatal fails the test;
// warnings are logged. ZATCA_RULES_OUT keeps the invoices and the SVRL reports in that folder.
func TestOfficialRules(t *testing.T) {
	dir := os.Getenv("ZATCA_RULES_DIR")
	if dir == "" {
		t.Skip("official rules not run: " + officialRulesHelp)
	}
	rules, err := filepath.Glob(filepath.Join(dir, "*.xsl"))
	if err != nil || len(rules) == 0 {
		t.Fatalf("ZATCA_RULES_DIR=%s holds no *.xsl rule file: %s", dir, officialRulesHelp)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("official rules not run: no java on PATH; " + officialRulesHelp)
	}
	jar := os.Getenv("SAXON_JAR")
	if jar == "" {
		jar = "/usr/share/java/Saxon-HE.jar"
	}
	if _, err := os.Stat(jar); err != nil {
		t.Skipf("official rules not run: no Saxon jar at %s; %s", jar, officialRulesHelp)
	}

	out := os.Getenv("ZATCA_RULES_OUT")
	if out == "" {
		out = t.TempDir()
	}
	in := filepath.Join(out, "invoices")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	names := writeRepresentativeInvoices(t, in)

	for _, rule := range rules {
		base := filepath.Base(rule)
		reports := filepath.Join(out, "svrl-"+strings.TrimSuffix(base, ".xsl"))
		if err := os.MkdirAll(reports, 0o755); err != nil {
			t.Fatal(err)
		}
		// One JVM per rule file: Saxon transforms every file of the input folder.
		cmd := exec.Command(java, "-cp", jar, "net.sf.saxon.Transform", "-s:"+in, "-o:"+reports, "-xsl:"+rule)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("saxon %s: %v\n%s", base, err, b)
		}
		counts := map[string]int{}
		for _, name := range names {
			asserts := readSVRL(t, filepath.Join(reports, name))
			for _, a := range asserts {
				counts[a.Flag]++
				switch a.Flag {
				case "error", "fatal":
					t.Errorf("%s: %s: %s %s at %s: %s", base, name, a.Flag, a.ID, a.Location, strings.Join(strings.Fields(a.Text), " "))
				default:
					t.Logf("%s: %s: %s %s: %s", base, name, a.Flag, a.ID, strings.Join(strings.Fields(a.Text), " "))
				}
			}
		}
		t.Logf("%s over %d invoices: failed asserts by flag %v", base, len(names), counts)
	}
}

// svrlAssert is a failed assert or successful report of an SVRL document.
type svrlAssert struct {
	ID       string `xml:"id,attr"`
	Flag     string `xml:"flag,attr"`
	Location string `xml:"location,attr"`
	Text     string `xml:"text"`
}

func readSVRL(t testing.TB, path string) []svrlAssert {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failed  []svrlAssert `xml:"failed-assert"`
		Reports []svrlAssert `xml:"successful-report"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return append(doc.Failed, doc.Reports...)
}

// representativeCases are the requests the official rules are run over: every category and
// exemption reason, mixed categories, discounts and charges, rounding edge cases, both
// calculation modes, buyer absent, partial and VAT-registered, supply dates and every
// payment method.
func representativeCases() []struct {
	name string
	req  einvoice.Request
} {
	type tc = struct {
		name string
		req  einvoice.Request
	}
	cases := []tc{{"sample", sampleRequest()}}

	standard := func(lines ...einvoice.Line) einvoice.Request {
		r := sampleRequest()
		r.Buyer, r.Supply, r.Notes = nil, nil, nil
		r.Lines = lines
		return r
	}
	line := func(id string, qty float64, price int64, cat string, rate float64, reason *string) einvoice.Line {
		return einvoice.Line{ID: id, NameEn: "Item " + id, Quantity: qty, UnitCode: "PCE", UnitPrice: price, TaxCategory: cat, TaxRate: rate, TaxExemptionReason: reason}
	}

	cases = append(cases, tc{"standard-no-buyer", standard(line("1", 3, 1999, "S", 15, nil))})

	codes := make([]string, 0, len(einvoice.ExemptionReasons))
	for code := range einvoice.ExemptionReasons {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		r := standard(line("1", 1, 10000, einvoice.ExemptionCategory(code), 0, ptr(code)))
		// Private education and healthcare to citizens name the citizen (BR-KSA-25, BR-KSA-49).
		r.Buyer = &einvoice.Buyer{LegalName: ptr("Fatimah Al-Harbi"), Identifiers: []einvoice.Identifier{{Scheme: "NAT", Value: "1098765432"}}, BuyerType: "individual"}
		cases = append(cases, tc{"exempt-" + code, r})
	}

	mixed := standard(
		einvoice.Line{ID: "1", NameEn: "Discounted", Quantity: 4, UnitCode: "EA", UnitPrice: 2500, TaxCategory: "S", TaxRate: 15,
			Discounts: []einvoice.AllowanceCharge{{Amount: 1000, Reason: ptr("Promotion")}, {Amount: 1, ReasonCode: ptr("95")}}},
		einvoice.Line{ID: "2", NameEn: "Charged", Quantity: 2, UnitCode: "HUR", UnitPrice: 12000, TaxCategory: "S", TaxRate: 15,
			Charges: []einvoice.AllowanceCharge{{Amount: 1500, Reason: ptr("Call-out"), ReasonCode: ptr("CG")}, {Amount: 99, Reason: ptr("Fuel")}}},
		einvoice.Line{ID: "3", NameEn: "Both", Quantity: 1, UnitCode: "SET", UnitPrice: 5000, TaxCategory: "Z", TaxExemptionReason: ptr("VATEX-SA-32"),
			Discounts: []einvoice.AllowanceCharge{{Amount: 500, Reason: ptr("Bundle"), ReasonCode: ptr("95")}},
			Charges:   []einvoice.AllowanceCharge{{Amount: 200, Reason: ptr("Packing"), ReasonCode: ptr("ABL")}}},
		line("4", 1, 700, "E", 0, ptr("VATEX-SA-30")),
		line("5", 2, 150, "O", 0, ptr("VATEX-SA-OOS")),
		line("6", 1, 300, "Z", 0, ptr("VATEX-SA-33")),
	)
	cases = append(cases, tc{"mixed-discounts-charges", mixed})

	// Rounding: half-up at every step, and category VAT (BR-CO-17) that differs from the sum of
	// the rounded line VATs.
	cases = append(cases,
		tc{"rounding-half-up", standard(line("1", 1, 10, "S", 15, nil), line("2", 1.5, 3333, "S", 15, nil), line("3", 0.333, 1, "S", 15, nil))},
		tc{"rounding-category-vs-lines", standard(line("1", 1, 3, "S", 15, nil), line("2", 1, 3, "S", 15, nil), line("3", 1, 3, "S", 15, nil))},
		tc{"rounding-small-quantities", standard(line("1", 0.001, 999999, "S", 15, nil), line("2", 7, 143, "S", 15, nil))},
	)

	client := standard(line("1", 2, 4500, "S", 15, nil), line("2", 1, 999, "S", 15, nil))
	client.TaxCalculationMode = einvoice.ModeClientSupplied
	client.Lines[0].Supplied = &einvoice.SuppliedLine{NetAmount: ptr(int64(9000)), VATAmount: ptr(int64(1350)), AmountWithVAT: ptr(int64(10350))}
	client.SuppliedTotals = &einvoice.SuppliedTotals{VATAmount: ptr(int64(1500)), PayableAmount: ptr(int64(11499))}
	cases = append(cases, tc{"client-supplied", client})

	vatBuyer := standard(line("1", 1, 50000, "S", 15, nil))
	vatBuyer.Buyer = &einvoice.Buyer{LegalName: ptr("Al Noor Trading LLC"), VATNumber: ptr("300000000000003"), CommercialRegistration: ptr("4030000000"),
		Address: ptr("Prince Sultan Street, Jeddah"), BuyerType: "business"}
	cases = append(cases, tc{"buyer-vat-registered", vatBuyer})

	partialBuyer := standard(line("1", 1, 2000, "S", 15, nil))
	partialBuyer.Buyer = &einvoice.Buyer{Address: ptr("Olaya, Riyadh"), BuyerType: "individual"}
	cases = append(cases, tc{"buyer-address-only", partialBuyer})

	nameBuyer := standard(line("1", 1, 2000, "S", 15, nil))
	nameBuyer.Buyer = &einvoice.Buyer{LegalName: ptr("Walk-in customer"), BuyerType: "individual"}
	cases = append(cases, tc{"buyer-name-only", nameBuyer})

	for _, pm := range []string{"1", "10", "30", "42", "48"} {
		r := standard(line("1", 1, 1000, "S", 15, nil))
		r.Supply = &einvoice.Supply{SupplyDate: "2025-02-27", PaymentMethod: ptr(pm)}
		if pm == "30" {
			r.Supply.EndDate = ptr("2025-02-28")
		}
		cases = append(cases, tc{"payment-" + pm, r})
	}

	minimalSeller := standard(line("1", 1, 1000, "S", 15, nil))
	minimalSeller.Seller.Address = &einvoice.Address{StreetName: ptr("Tahlia Street"), BuildingNumber: ptr("1234"), District: ptr("Al Rawdah"),
		City: ptr("Jeddah"), PostalCode: ptr("23435"), CountryCode: "SA"}
	minimalSeller.Seller.Identifiers = nil
	cases = append(cases, tc{"seller-minimal-address", minimalSeller})

	// Several seller identifications: only the first in BR-KSA-08's order is written.
	manyIDs := standard(line("L-0001", 1, 1000, "S", 15, nil))
	manyIDs.Seller.CommercialRegistration = nil
	manyIDs.Seller.Identifiers = []einvoice.Identifier{{Scheme: "OTH", Value: "X1"}, {Scheme: "MOM", Value: "M2"}, {Scheme: "700", Value: "7003"}}
	cases = append(cases, tc{"seller-several-identifications", manyIDs})

	// Every other kind: the full sample and a minimal one (no supply, one line) as each kind;
	// notes refer to the first invoice of the chain.
	for _, kind := range einvoice.Kinds[1:] {
		cases = append(cases,
			tc{kind.Type + "-sample", requestOf(kind, sampleRequest())},
			tc{kind.Type + "-minimal", requestOf(kind, standard(line("1", 1, 1000, "S", 15, nil)))})
	}
	// Standard documents: a buyer identified by registration instead of a VAT number, and one
	// abroad (the Saudi address rules do not apply).
	std, _ := einvoice.KindOf(einvoice.TypeStandard)
	crnBuyer := requestOf(std, standard(line("1", 2, 12500, "S", 15, nil)))
	crnBuyer.Buyer.VATNumber, crnBuyer.Buyer.CommercialRegistration = nil, ptr("4030000000")
	foreignBuyer := requestOf(std, standard(line("1", 1, 40000, "Z", 0, ptr("VATEX-SA-32"))))
	foreignBuyer.Buyer.VATNumber = nil
	foreignBuyer.Buyer.Identifiers = []einvoice.Identifier{{Scheme: "OTH", Value: "DE123456789"}}
	foreignBuyer.Buyer.PostalAddress = &einvoice.Address{StreetName: ptr("Unter den Linden 1"), City: ptr("Berlin"), PostalCode: ptr("10117"), CountryCode: "DE"}
	cases = append(cases, tc{"standard-buyer-crn", crnBuyer}, tc{"standard-buyer-abroad", foreignBuyer})
	return cases
}

// writeRepresentativeInvoices generates representativeCases as one chain (the first with
// PIH = hash of "0", each later one with its predecessor's hash) into dir and returns the file
// names. Every case must be free of error issues: the rules judge valid invoices.
func writeRepresentativeInvoices(t *testing.T, dir string) []string {
	t.Helper()
	key, err := einvoice.NewSandboxKey("0193b5e2-4a1c-7d2e-8f30-5a6b7c8d9e01", certificatesIssuedAt)
	if err != nil {
		t.Fatal(err)
	}
	pih := einvoice.FirstPIH
	var names []string
	for i, c := range representativeCases() {
		d, err := einvoice.Prepare(c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		inv, err := d.Generate(einvoice.Identity{
			Number: fmt.Sprintf("SINV-%06d", i+1), UUID: fmt.Sprintf("6f0b8a3e-2c1d-4e5f-9a8b-%012d", i+1), ICV: int64(i + 1), PIH: pih,
			IssuedAt: time.Date(2025, 3, 1, 9, 30, i, 0, time.UTC),
		}, key)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !inv.Valid() {
			// The rules judge invoices we call valid; warnings are fine.
			t.Fatalf("%s: the request breaks a rule of ours: %+v", c.name, inv.Issues)
		}
		pih = inv.Hash
		name := fmt.Sprintf("%02d-%s.xml", i+1, c.name)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(inv.XML), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}
