// Package openapi embeds the API contract, openapi.yaml, so the server validates requests
// against exactly the document it was built from.
package openapi

import _ "embed"

// Document is the raw OpenAPI 3.0.3 document of the v1 API.
//
//go:embed openapi.yaml
var Document []byte
