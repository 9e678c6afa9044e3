// Package scenarios holds the project's scenario files as YAML and embeds
// the server profiles so that the CLI and the tests find them by name
// (see internal/harness/profile: Builtin, Names).
package scenarios

import "embed"

// Profiles holds profiles/*.yaml: the built-in server profiles.
//
//go:embed profiles/*.yaml
var Profiles embed.FS
