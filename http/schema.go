package http

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/danielgtaylor/huma/v2"
)

// The OpenAPI document is generated from the types; these stand in for
// root types whose wire form reflection cannot see: durations are integer
// nanoseconds, enumerations travel by name, arguments are JSON objects.

type (
	nanosecondsDoc int64
	outcomeDoc     string
	tierDoc        string
	statusDoc      string
	surfaceDoc     string
	roleDoc        string
	hashDoc        string
	presetDoc      string
	layerDoc       string
)

func (nanosecondsDoc) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeInteger, Format: "int64", Description: "A duration in nanoseconds."}
}

func (outcomeDoc) Schema(huma.Registry) *huma.Schema {
	var names []any
	for o := airlock.Auto; o.Valid(); o++ {
		names = append(names, o.String())
	}
	return enumSchema("What the gate does, from most to least autonomy.", names)
}

func (tierDoc) Schema(huma.Registry) *huma.Schema {
	var names []any
	for _, t := range airlock.Tiers() {
		names = append(names, t.String())
	}
	return enumSchema("The risk tier, from least to most dangerous.", names)
}

func (statusDoc) Schema(huma.Registry) *huma.Schema {
	return enumSchema("Where an approval request stands.", []any{airlock.StatusPending, airlock.StatusApproved,
		airlock.StatusRejected, airlock.StatusExpired, airlock.StatusCancelled})
}

func (surfaceDoc) Schema(huma.Registry) *huma.Schema {
	return enumSchema("Where a resolution came from (system: no person).", []any{airlock.SurfaceWeb, airlock.SurfaceCLI,
		airlock.SurfaceAPI, airlock.SurfaceSlack, airlock.SurfaceWebhook, airlock.SurfaceSystem})
}

func (roleDoc) Schema(huma.Registry) *huma.Schema {
	names := make([]any, len(airlock.Roles))
	for i, r := range airlock.Roles {
		names[i] = r
	}
	return enumSchema("What a token may do.", names)
}

func (hashDoc) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Description: "A SHA-256 action hash: 64 hex digits (\"sha256:\" may prefix it in input)."}
}

func (presetDoc) Schema(huma.Registry) *huma.Schema {
	return enumSchema("How much an agent's rules are trusted for write-tier and riskier actions; absent for none.",
		[]any{airlock.PresetAutonomous.String(), airlock.PresetStandard.String(), airlock.PresetConservative.String()})
}

func (layerDoc) Schema(huma.Registry) *huma.Schema {
	var names []any
	for l := airlock.LayerOrganisation; l <= airlock.LayerSession; l++ {
		names = append(names, l.String())
	}
	return enumSchema("Where a policy sits in the stack, from the top down.", names)
}

func enumSchema(doc string, names []any) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Enum: names, Description: doc}
}

// documentTypes maps the root types to their wire schemas.
func documentTypes(reg huma.Registry) {
	reg.RegisterTypeAlias(reflect.TypeFor[json.RawMessage](), reflect.TypeFor[map[string]any]())
	reg.RegisterTypeAlias(reflect.TypeFor[time.Duration](), reflect.TypeFor[nanosecondsDoc]())
	reg.RegisterTypeAlias(reflect.TypeFor[airlock.Outcome](), reflect.TypeFor[outcomeDoc]())
	reg.RegisterTypeAlias(reflect.TypeFor[airlock.RiskTier](), reflect.TypeFor[tierDoc]())
	reg.RegisterTypeAlias(reflect.TypeFor[airlock.ApprovalStatus](), reflect.TypeFor[statusDoc]())
	reg.RegisterTypeAlias(reflect.TypeFor[airlock.Surface](), reflect.TypeFor[surfaceDoc]())
	reg.RegisterTypeAlias(reflect.TypeFor[airlock.Role](), reflect.TypeFor[roleDoc]())
	reg.RegisterTypeAlias(reflect.TypeFor[airlock.Hash](), reflect.TypeFor[hashDoc]())
	reg.RegisterTypeAlias(reflect.TypeFor[airlock.Preset](), reflect.TypeFor[presetDoc]())
	reg.RegisterTypeAlias(reflect.TypeFor[airlock.Layer](), reflect.TypeFor[layerDoc]())
}
