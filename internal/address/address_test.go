package address_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/provider/coreapi/internal/address"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"RRRD2929": "RRRD2929", " rrrd2929 ": "RRRD2929", "\tRrRd2929\n": "RRRD2929"} {
		if got, err := address.Normalize(in); err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "RRRD292", "RRRD29290", "RRR12929", "RR RD2929", "RRRD-2929", "ظظظظ2929", "RRRD٢٩٢٩", "2929RRRD"} {
		if _, err := address.Normalize(bad); !errors.Is(err, address.ErrMalformed) {
			t.Errorf("Normalize(%q) err = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, code, lang, status string
		street, city, region     string
		missing                  []string
	}{
		{"Resolved", "RRMA1234", "en", address.StatusResolved, "Anas Ibn Malik Road", "Riyadh", "Riyadh Region", []string{}},
		{"ResolvedArabic", "rrma1234", "ar", address.StatusResolved, "طريق أنس بن مالك", "الرياض", "منطقة الرياض", []string{}},
		{"PartialNoPlotNoLocation", " rrrd2929 ", "en", address.StatusPartial, "King Fahd Road", "Riyadh", "Riyadh Region",
			[]string{"additional_number", "latitude", "longitude"}},
		{"PartialArabic", "RRRD2929", "ar", address.StatusPartial, "طريق الملك فهد", "الرياض", "منطقة الرياض",
			[]string{"additional_number", "latitude", "longitude"}},
		{"PartialCityOnly", "MTAF1000", "en", address.StatusPartial, "", "Taif", "Makkah Region",
			[]string{"street", "district", "postal_code", "additional_number", "latitude", "longitude"}},
		{"PartialRegionOnly", "NNAJ4321", "ar", address.StatusPartial, "", "", "منطقة نجران",
			[]string{"street", "district", "city", "postal_code", "additional_number", "latitude", "longitude"}},
		{"UnknownArea", "RZZZ2929", "en", address.StatusNotFound, "", "", "", address.Fields},
		{"UnknownRegion", "ZRRD2929", "en", address.StatusNotFound, "", "", "", address.Fields},
		{"BuildingZero", "RRMA0000", "en", address.StatusNotFound, "", "", "", address.Fields},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := address.Resolve(tc.code, tc.lang)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.status || r.Language != tc.lang || !slices.Equal(r.MissingFields, tc.missing) {
				t.Errorf("status %s language %s missing %v; want %s %s %v", r.Status, r.Language, r.MissingFields, tc.status, tc.lang, tc.missing)
			}
			for field, pair := range map[string][2]*string{"street": {r.Address.Street, ptrOrNil(tc.street)}, "city": {r.Address.City, ptrOrNil(tc.city)},
				"region": {r.Address.Region, ptrOrNil(tc.region)}} {
				if (pair[0] == nil) != (pair[1] == nil) || (pair[0] != nil && *pair[0] != *pair[1]) {
					t.Errorf("%s = %v, want %v", field, deref(pair[0]), deref(pair[1]))
				}
			}
			if r.Status != address.StatusNotFound && *r.Address.BuildingNumber != r.ShortAddress[4:] {
				t.Errorf("building number %s, want the digits of %s", *r.Address.BuildingNumber, r.ShortAddress)
			}
			p := r.Provenance
			if p.Source != "synthetic_sandbox_dataset" || p.Authoritative || p.ExternalSourceConsulted || p.DatasetVersion != address.DatasetVersion() || p.Note == "" {
				t.Errorf("provenance = %+v", p)
			}
		})
	}
	t.Run("Deterministic", func(t *testing.T) {
		t.Parallel()
		a, _ := address.Resolve("MJED4821", "en")
		b, _ := address.Resolve("mjed4821", "ar")
		if *a.Address.AdditionalNumber != *b.Address.AdditionalNumber || *a.Address.Latitude != *b.Address.Latitude || len(*a.Address.AdditionalNumber) != 4 {
			t.Errorf("the same code resolves differently: %+v %+v", a.Address, b.Address)
		}
		if *a.Address.PostalCode != "23435" || *b.Address.District != "الروضة" {
			t.Errorf("MJED4821 = %+v / %+v", a.Address, b.Address)
		}
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		t.Parallel()
		if _, err := address.Resolve("RRRD29", "en"); !errors.Is(err, address.ErrMalformed) {
			t.Errorf("err = %v", err)
		}
	})
}

func ptrOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
