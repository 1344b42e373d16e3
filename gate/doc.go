// Package gate is Airlock's engine: it classifies every action an agent
// attempts (package catalog, then the policies' classifiers and sensitive
// paths), decides it by a stack of policies
// (YAML with positions, CEL conditions, floors, presets, ceilings), and,
// through the Enforcer, records each decision in a store before the action
// may run.
package gate
