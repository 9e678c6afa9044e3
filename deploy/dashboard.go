package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
)

// Dashboard is the part of a Grafana dashboard JSON model that holds
// queries: panels (rows nest theirs) and template variables. Other fields
// are ignored.
type Dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []Panel `json:"panels"`
	Templating struct {
		List []Variable `json:"list"`
	} `json:"templating"`
}

// Panel is a dashboard panel; a row panel carries its collapsed children.
type Panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *Datasource `json:"datasource"`
	Targets    []Target    `json:"targets"`
	Panels     []Panel     `json:"panels"`
}

// Target is one query of a panel.
type Target struct {
	RefID      string      `json:"refId"`
	Expr       string      `json:"expr"`
	Datasource *Datasource `json:"datasource"`
}

// Datasource names a data source by type and uid (a variable reference such
// as ${datasource} in a templated dashboard).
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Variable is a template variable. Query is a string in old dashboards and
// an object with a query field in new ones; Definition is its display text.
type Variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
	Datasource *Datasource     `json:"datasource"`
	AllValue   string          `json:"allValue"`
	IncludeAll bool            `json:"includeAll"`
}

// PanelQuery is a panel's query, named for messages.
type PanelQuery struct {
	Panel string
	RefID string
	Expr  string
}

func (q PanelQuery) String() string { return fmt.Sprintf("panel %q query %s", q.Panel, q.RefID) }

// LoadDashboard reads a Grafana dashboard JSON file.
func LoadDashboard(path string) (*Dashboard, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dashboard: %w", err)
	}
	var d Dashboard
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&d); err != nil {
		return nil, &FileError{File: path, Msg: "invalid dashboard JSON: " + err.Error()}
	}
	if len(d.Panels) == 0 {
		return nil, &FileError{File: path, Msg: "dashboard has no panels"}
	}
	return &d, nil
}

// AllPanels lists the dashboard's panels, those inside rows included.
func (d *Dashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// Queries lists every panel query, in panel order.
func (d *Dashboard) Queries() []PanelQuery {
	var out []PanelQuery
	for _, p := range d.AllPanels() {
		for _, t := range p.Targets {
			out = append(out, PanelQuery{Panel: p.Title, RefID: t.RefID, Expr: t.Expr})
		}
	}
	return out
}

// labelValues matches Grafana's label_values(selector, label) and
// label_values(label) variable queries.
var labelValues = regexp.MustCompile(`^\s*label_values\(\s*(?:(.+?)\s*,\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$`)

// VariableSelector returns the PromQL series selector of a query variable
// defined by label_values(selector, label), and the label; selector is
// empty for label_values(label). Other variable queries are an error.
func (v Variable) VariableSelector() (selector, label string, err error) {
	// Grafana runs the query; the definition is only its display text.
	var text string
	var obj struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(v.Query, &text) != nil && json.Unmarshal(v.Query, &obj) == nil {
		text = obj.Query
	}
	if text == "" {
		text = v.Definition
	}
	m := labelValues.FindStringSubmatch(text)
	if m == nil {
		return "", "", fmt.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, text)
	}
	return m[1], m[2], nil
}
