package thresholds

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// checkNotEmpty refuses a thresholds file without a setting (empty,
// blank or comments only, or cut to nothing): it would drop every limit
// and override of the shipped file, silently. Parse itself takes an
// empty text (Empty's set) for callers that mean it.
func checkNotEmpty(file string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil // Parse words the syntax error with its line
	}
	if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.MappingNode && len(doc.Content[0].Content) == 0) {
		return fmt.Errorf("thresholds: %s holds no setting: it would drop every limit of the shipped thresholds.yaml; give the settings (copy the shipped thresholds.yaml) or leave out --thresholds", file)
	}
	return nil
}
