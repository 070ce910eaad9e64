// Package address resolves Saudi short addresses (four letters and four digits, e.g.
// RRRD2929) from a synthetic, deterministic data set shipped with the service. The first
// letter names the region, the four letters together an area (city, district, street) and
// the digits the building number. Results are explicit about every unknown field and about
// their provenance: the data are synthetic, never authoritative, and no external source is
// consulted (the authoritative source is gated).
package address

import (
	_ "embed"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Statuses of a resolution.
const (
	StatusResolved = "resolved"
	StatusPartial  = "partial"
	StatusNotFound = "not_found"
)

// Languages of names.
const (
	English = "en"
	Arabic  = "ar"
)

// Fields of an address, in the order missing_fields lists them.
var Fields = []string{"building_number", "street", "district", "city", "region", "postal_code", "additional_number", "latitude", "longitude"}

// ErrMalformed is returned for anything that is not four letters and four digits once
// surrounding spaces are trimmed and letters upper-cased.
var ErrMalformed = errors.New("address: a short address is four letters and four digits, e.g. RRRD2929")

var shortAddress = regexp.MustCompile(`^[A-Z]{4}[0-9]{4}$`)

// Normalize trims surrounding white space and upper-cases s, and checks its form.
func Normalize(s string) (string, error) {
	n := strings.ToUpper(strings.TrimFunc(s, unicode.IsSpace))
	if !shortAddress.MatchString(n) {
		return "", ErrMalformed
	}
	return n, nil
}

// Address is a resolved address; nil fields are unknown.
type Address struct {
	BuildingNumber   *string
	Street           *string
	District         *string
	City             *string
	Region           *string
	PostalCode       *string
	AdditionalNumber *string
	Latitude         *float64
	Longitude        *float64
}

// Provenance says where a result came from.
type Provenance struct {
	Source                  string
	DatasetVersion          string
	Authoritative           bool
	ExternalSourceConsulted bool
	Note                    string
}

// Resolution is the answer for one short address.
type Resolution struct {
	Status        string
	ShortAddress  string // normalised
	Language      string
	Address       Address
	MissingFields []string
	Provenance    Provenance
}

//go:embed dataset.json
var datasetJSON []byte

type names struct {
	En string `json:"en"`
	Ar string `json:"ar"`
}

func (n *names) in(lang string) *string {
	if n == nil {
		return nil
	}
	s := n.En
	if lang == Arabic {
		s = n.Ar
	}
	return &s
}

type area struct {
	City           *names      `json:"city"`
	District       *names      `json:"district"`
	Street         *names      `json:"street"`
	PostalCode     *string     `json:"postal_code"`
	AdditionalBase *int        `json:"additional_base"`
	Location       *[2]float64 `json:"location"`
}

type dataset struct {
	Version string           `json:"version"`
	Regions map[string]names `json:"regions"`
	Areas   map[string]area  `json:"areas"`
}

var data = func() dataset {
	var d dataset
	if err := json.Unmarshal(datasetJSON, &d); err != nil {
		panic("address: embedded dataset.json: " + err.Error())
	}
	return d
}()

// DatasetVersion is the version of the embedded data set.
func DatasetVersion() string { return data.Version }

// Resolve normalises code and resolves it in lang (English or Arabic). An unknown area or
// region, or building number 0000, is StatusNotFound with every field missing; a known area
// lacking some facts is StatusPartial. The only error is ErrMalformed.
func Resolve(code, lang string) (*Resolution, error) {
	n, err := Normalize(code)
	if err != nil {
		return nil, err
	}
	if lang != Arabic {
		lang = English
	}
	r := &Resolution{Status: StatusNotFound, ShortAddress: n, Language: lang, Provenance: Provenance{
		Source:         "synthetic_sandbox_dataset",
		DatasetVersion: data.Version,
		Note:           "Synthetic sandbox data; not authoritative proof of an address. No external source was consulted: the authoritative source is gated.",
	}}
	a, known := data.Areas[n[:4]]
	region, regionKnown := data.Regions[n[:1]]
	building, _ := strconv.Atoi(n[4:])
	if known && regionKnown && building > 0 {
		digits := n[4:]
		r.Address = Address{
			BuildingNumber: &digits,
			Street:         a.Street.in(lang),
			District:       a.District.in(lang),
			City:           a.City.in(lang),
			Region:         region.in(lang),
			PostalCode:     a.PostalCode,
		}
		if a.AdditionalBase != nil {
			// A synthetic plot number: deterministic in the area and building, always 4 digits.
			s := strconv.Itoa((*a.AdditionalBase+building)%9000 + 1000)
			r.Address.AdditionalNumber = &s
		}
		if a.Location != nil {
			// Buildings spread deterministically around the area's centre (within ~1 km).
			lat := round6(a.Location[0] + float64(building%100)*0.0001)
			lon := round6(a.Location[1] + float64(building/100)*0.0001)
			r.Address.Latitude, r.Address.Longitude = &lat, &lon
		}
	}
	r.MissingFields = r.Address.missing()
	switch {
	case r.Address.BuildingNumber == nil:
		r.Status = StatusNotFound
	case len(r.MissingFields) > 0:
		r.Status = StatusPartial
	default:
		r.Status = StatusResolved
	}
	return r, nil
}

func (a Address) missing() []string {
	known := []bool{a.BuildingNumber != nil, a.Street != nil, a.District != nil, a.City != nil, a.Region != nil,
		a.PostalCode != nil, a.AdditionalNumber != nil, a.Latitude != nil, a.Longitude != nil}
	missing := []string{}
	for i, ok := range known {
		if !ok {
			missing = append(missing, Fields[i])
		}
	}
	return missing
}

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }
