// Package jsoncheck checks a JSON request body against a schema of the OpenAPI document in
// one pass over its bytes, without building the tree of maps kin-openapi validates.
//
// It is the contract gate's fast path and never its judge: Valid answers true only for a
// body that kin-openapi (with the gate's strict decoder: one JSON value of valid UTF-8, no
// NUL in any text, no null for a declared property that does not admit one) accepts too, and
// the gate hands every body it does not accept to kin-openapi, which decides and explains.
// So a body is refused exactly when kin-openapi refuses it, and the error a client reads is
// kin-openapi's. Compile refuses schemas using keywords this package does not implement
// (oneOf, not, multipleOf, readOnly, ...): their operations keep kin-openapi's path alone.
// The differential tests hold both to the same answers.
package jsoncheck

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// ErrUnsupported is returned by Compile for a schema using a keyword Valid does not check.
var ErrUnsupported = errors.New("jsoncheck: schema keyword not supported")

// Checker validates bodies against one compiled schema. It is safe for concurrent use.
type Checker struct {
	root *node
}

// kinds is a set of JSON value kinds a schema's type admits.
type kinds uint8

const (
	kindObject kinds = 1 << iota
	kindArray
	kindString
	kindNumber
	kindInteger
	kindBoolean
	kindAll = kindObject | kindArray | kindString | kindNumber | kindInteger | kindBoolean
)

var kindOfType = map[string]kinds{
	openapi3.TypeObject: kindObject, openapi3.TypeArray: kindArray, openapi3.TypeString: kindString,
	openapi3.TypeNumber: kindNumber, openapi3.TypeInteger: kindInteger, openapi3.TypeBoolean: kindBoolean,
}

// node is one compiled schema. Its fields mirror kin-openapi's visitJSON in the order it
// applies them: null, empty schema, anyOf/allOf, enum, then the keywords of the value's kind.
type node struct {
	nullOK bool // null is accepted (nullable, or through anyOf/allOf as kin-openapi decides)
	empty  bool // the empty schema: any value but null
	anyOf  []*node
	allOf  []*node
	enum   map[string]struct{} // string values only

	types kinds

	// strings
	minLength, maxLength int // code points, as kin-openapi counts; maxLength -1: none
	pattern              *regexp.Regexp
	format               openapi3.StringFormatValidator

	// numbers
	integerFormat        openapi3.IntegerFormatValidator
	numberFormat         openapi3.NumberFormatValidator
	min, max             float64
	hasMin, hasMax       bool
	exclusiveMin, exclMx bool

	// arrays
	items              *node // nil: any item
	itemsNullOK        bool
	minItems, maxItems int // maxItems -1: none
	unique             bool

	// objects
	properties      map[string]*property
	requiredCount   int
	additional      additionalRule
	additionalNode  *node
	additionalNulls bool
}

type property struct {
	node     *node
	nullOK   bool // kin-openapi's answer and the gate's: a declared property must admit null
	required int  // bit index among the required properties, or -1
}

type additionalRule uint8

const (
	additionalAny additionalRule = iota
	additionalForbidden
	additionalSchema
)

// maxRequired bounds the required properties of one object: Valid tracks them in a bit set.
const maxRequired = 64

// Compile prepares s. It returns ErrUnsupported (wrapped, naming the keyword) when s or a
// schema under it uses a keyword Valid does not implement.
func Compile(s *openapi3.Schema) (*Checker, error) {
	c := compiler{seen: map[*openapi3.Schema]bool{}}
	root, err := c.node(s)
	if err != nil {
		return nil, err
	}
	return &Checker{root: root}, nil
}

type compiler struct {
	seen map[*openapi3.Schema]bool // schemas on the current path: recursion is not supported
}

func unsupported(keyword string) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, keyword)
}

func (c *compiler) node(s *openapi3.Schema) (*node, error) {
	if s == nil {
		return nil, unsupported("unresolved $ref")
	}
	if c.seen[s] {
		return nil, unsupported("recursive schema")
	}
	c.seen[s] = true
	defer delete(c.seen, s)

	switch {
	case s.Not != nil:
		return nil, unsupported("not")
	case len(s.OneOf) > 0:
		return nil, unsupported("oneOf")
	case s.MultipleOf != nil:
		return nil, unsupported("multipleOf")
	case s.MinProps != 0 || s.MaxProps != nil:
		return nil, unsupported("minProperties/maxProperties")
	case s.ReadOnly || s.WriteOnly:
		return nil, unsupported("readOnly/writeOnly")
	case s.ExclusiveMin.Value != nil || s.ExclusiveMax.Value != nil:
		return nil, unsupported("numeric exclusiveMinimum/exclusiveMaximum (3.1)")
	case s.Always != nil || s.Const != nil || s.Discriminator != nil:
		return nil, unsupported("boolean schema, const or discriminator")
	case len(s.PrefixItems) > 0 || s.Contains != nil || len(s.PatternProperties) > 0 ||
		len(s.DependentSchemas) > 0 || s.PropertyNames != nil ||
		s.UnevaluatedItems.Has != nil || s.UnevaluatedItems.Schema != nil ||
		s.UnevaluatedProperties.Has != nil || s.UnevaluatedProperties.Schema != nil:
		return nil, unsupported("JSON Schema 2020-12 keyword")
	case s.Type.IncludesNull():
		return nil, unsupported(`type "null"`)
	}

	n := &node{empty: s.IsEmpty(), minLength: int(s.MinLength), maxLength: -1, maxItems: -1}
	if n.empty {
		return n, nil
	}
	var err error
	for _, ref := range s.AnyOf {
		var b *node
		if b, err = c.node(ref.Value); err != nil {
			return nil, err
		}
		n.anyOf = append(n.anyOf, b)
	}
	for _, ref := range s.AllOf {
		var b *node
		if b, err = c.node(ref.Value); err != nil {
			return nil, err
		}
		n.allOf = append(n.allOf, b)
	}
	n.nullOK = s.Nullable || (len(n.anyOf)+len(n.allOf) > 0 && n.xOfAcceptsNull())

	if len(s.Enum) > 0 {
		n.enum = make(map[string]struct{}, len(s.Enum))
		for _, v := range s.Enum {
			str, ok := v.(string)
			if !ok {
				return nil, unsupported("enum with a value that is not a string")
			}
			n.enum[str] = struct{}{}
		}
	}

	if s.Type == nil {
		n.types = kindAll
	}
	for _, t := range s.Type.Slice() {
		kind, ok := kindOfType[t]
		if !ok {
			return nil, unsupported("type " + t)
		}
		n.types |= kind
	}

	if err := n.compileString(s); err != nil {
		return nil, err
	}
	if err := n.compileNumber(s); err != nil {
		return nil, err
	}
	if err := c.compileArray(n, s); err != nil {
		return nil, err
	}
	if err := c.compileObject(n, s); err != nil {
		return nil, err
	}
	return n, nil
}

// xOfAcceptsNull is kin-openapi's answer for null under anyOf/allOf: some anyOf branch and
// every allOf branch must accept it.
func (n *node) xOfAcceptsNull() bool {
	if len(n.anyOf) > 0 {
		ok := false
		for _, b := range n.anyOf {
			ok = ok || b.nullOK
		}
		if !ok {
			return false
		}
	}
	for _, b := range n.allOf {
		if !b.nullOK {
			return false
		}
	}
	return true
}

func (n *node) compileString(s *openapi3.Schema) error {
	if s.MaxLength != nil {
		if *s.MaxLength > math.MaxInt32 {
			return unsupported("maxLength beyond 2^31")
		}
		n.maxLength = int(*s.MaxLength)
	}
	if s.MinLength > math.MaxInt32 {
		return unsupported("minLength beyond 2^31")
	}
	if s.Pattern != "" {
		// kin-openapi rewrites \uXXXX escapes before compiling; patterns that need it are
		// left to kin-openapi rather than rewritten twice.
		if strings.Contains(s.Pattern, `\u`) {
			return unsupported(`pattern with \u escapes`)
		}
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return unsupported("pattern that does not compile")
		}
		n.pattern = re
	}
	if s.Format != "" && n.types&kindString != 0 {
		n.format = openapi3.SchemaStringFormats[s.Format]
	}
	return nil
}

func (n *node) compileNumber(s *openapi3.Schema) error {
	// Like kin-openapi: a format is checked when a validator is registered for it, an
	// integer one when the type admits integers only (int32 and int64 are registered).
	if s.Format != "" {
		if n.types&kindInteger != 0 && n.types&kindNumber == 0 {
			n.integerFormat = openapi3.SchemaIntegerFormats[s.Format]
		} else {
			n.numberFormat = openapi3.SchemaNumberFormats[s.Format]
		}
	}
	if s.Min != nil {
		n.min, n.hasMin = *s.Min, true
		n.exclusiveMin = s.ExclusiveMin.Bool != nil && *s.ExclusiveMin.Bool
	}
	if s.Max != nil {
		n.max, n.hasMax = *s.Max, true
		n.exclMx = s.ExclusiveMax.Bool != nil && *s.ExclusiveMax.Bool
	}
	return nil
}

func (c *compiler) compileArray(n *node, s *openapi3.Schema) error {
	n.minItems = int(s.MinItems)
	if s.MaxItems != nil {
		if *s.MaxItems > math.MaxInt32 {
			return unsupported("maxItems beyond 2^31")
		}
		n.maxItems = int(*s.MaxItems)
	}
	n.unique = s.UniqueItems
	n.itemsNullOK = true
	if s.Items != nil {
		items, err := c.node(s.Items.Value)
		if err != nil {
			return err
		}
		n.items, n.itemsNullOK = items, items.nullOK
	}
	return nil
}

func (c *compiler) compileObject(n *node, s *openapi3.Schema) error {
	required := map[string]int{}
	for _, name := range s.Required {
		if _, dup := required[name]; !dup {
			required[name] = len(required)
		}
	}
	if len(required) > maxRequired {
		return unsupported("more than 64 required properties")
	}
	n.requiredCount = len(required)
	if len(s.Properties) > 0 || len(required) > 0 {
		n.properties = make(map[string]*property, len(s.Properties)+len(required))
	}
	for name, ref := range s.Properties {
		p, err := c.node(ref.Value)
		if err != nil {
			return err
		}
		index, isRequired := required[name]
		if !isRequired {
			index = -1
		}
		n.properties[name] = &property{node: p, nullOK: p.nullOK && AdmitsNull(ref.Value), required: index}
	}
	for name, index := range required {
		if _, declared := n.properties[name]; !declared {
			// Required but undeclared: any value satisfies it (or the additional rule).
			if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
				// kin-openapi refuses the property as unsupported and requires it too:
				// no body passes; leave the schema to kin-openapi.
				return unsupported("required property not allowed by additionalProperties")
			}
			if s.AdditionalProperties.Schema != nil {
				return unsupported("required property validated by additionalProperties")
			}
			n.properties[name] = &property{node: nil, nullOK: true, required: index}
		}
	}
	switch {
	case s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has:
		n.additional = additionalForbidden
	case s.AdditionalProperties.Schema != nil:
		a, err := c.node(s.AdditionalProperties.Schema.Value)
		if err != nil {
			return err
		}
		n.additional, n.additionalNode, n.additionalNulls = additionalSchema, a, a.nullOK
	default:
		n.additional = additionalAny
	}
	return nil
}

// AdmitsNull is the gate's rule for a declared property sent as null, which kin-openapi alone
// would take for an absent one: the schema admits null itself, through a lone allOf, in a
// branch of anyOf or oneOf, or by having no type at all.
func AdmitsNull(s *openapi3.Schema) bool {
	switch {
	case s.Nullable:
		return true
	case len(s.AllOf) == 1:
		return AdmitsNull(s.AllOf[0].Value)
	case s.Type == nil && len(s.AllOf) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0:
		return true
	}
	for _, b := range s.AnyOf {
		if AdmitsNull(b.Value) {
			return true
		}
	}
	for _, b := range s.OneOf {
		if AdmitsNull(b.Value) {
			return true
		}
	}
	return false
}

// Parameter checks the raw value of a path, query or header parameter with a primitive
// schema (string, integer, number or boolean), as kin-openapi parses and validates it.
type Parameter struct {
	n     *node
	typ   string
	int32 bool
}

// CompileParameter prepares the check of a parameter of schema s: one primitive type, given
// by the schema or by its lone allOf (kin-openapi decodes the value by that type). Other
// schemas are left to kin-openapi (ErrUnsupported).
func CompileParameter(s *openapi3.Schema) (*Parameter, error) {
	if s == nil {
		return nil, unsupported("parameter without a schema")
	}
	typed := s
	if s.Type == nil && len(s.AllOf) == 1 && s.AllOf[0].Value != nil {
		typed = s.AllOf[0].Value
	}
	if typed.Type == nil || len(typed.Type.Slice()) != 1 || len(typed.AllOf)+len(typed.AnyOf)+len(typed.OneOf) > 0 ||
		len(s.AnyOf)+len(s.OneOf) > 0 {
		return nil, unsupported("parameter schema that is not one primitive type")
	}
	typ := typed.Type.Slice()[0]
	switch typ {
	case openapi3.TypeString, openapi3.TypeInteger, openapi3.TypeNumber, openapi3.TypeBoolean:
	default:
		return nil, unsupported("parameter of type " + typ)
	}
	c := compiler{seen: map[*openapi3.Schema]bool{}}
	n, err := c.node(s)
	if err != nil {
		return nil, err
	}
	return &Parameter{n: n, typ: typ, int32: typed.Format == "int32"}, nil
}
