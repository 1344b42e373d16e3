// Package schema publishes the JSON Schema of Airlock policy files, for
// editors (yaml-language-server) and for `airlock policy schema`.
package schema

import _ "embed"

// Policy is the JSON Schema (draft 2020-12) of a policy document.
//
//go:embed policy.schema.json
var Policy []byte
