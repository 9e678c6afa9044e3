// Package scenarios holds the project's scenario files as YAML and embeds
// them so that the CLI and the tests find them by name: the server profiles
// (see internal/harness/profile: Builtin, Names) and the workloads (see
// internal/harness/scenario: Builtin, Names).
package scenarios

import "embed"

// Profiles holds profiles/*.yaml: the built-in server profiles.
//
//go:embed profiles/*.yaml
var Profiles embed.FS

// Workloads holds workloads/*.yaml: the built-in scenarios' workloads and
// load shapes.
//
//go:embed workloads/*.yaml
var Workloads embed.FS
