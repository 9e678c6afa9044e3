package deploy_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/deploy"
)

func TestDashboardQueries(t *testing.T) {
	t.Parallel()
	d, err := deploy.LoadDashboard(filepath.Join("testdata", "dashboards", "rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range d.Queries() {
		got = append(got, q.String()+" "+q.Expr)
	}
	want := []string{`panel "top" query A up`, `panel "inside" query A a`, `panel "inside" query B b`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestVariableSelector(t *testing.T) {
	t.Parallel()
	d, err := deploy.LoadDashboard(filepath.Join("testdata", "dashboards", "rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		selector, label, wantErr string
	}{
		// Grafana 10+: an object whose query field holds the text.
		{`up{job="vllm"}`, "instance", ""},
		// Older dashboards: a plain string, label only.
		{"", "model_name", ""},
		// Anything but label_values is refused by name.
		{"", "", `variable other: query "query_result(up)" is not label_values(selector, label)`},
	} {
		sel, label, err := d.Templating.List[i].VariableSelector()
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("variable %d: got %v, want %q", i, err, tc.wantErr)
			}
			continue
		}
		if err != nil || sel != tc.selector || label != tc.label {
			t.Errorf("variable %d: got %q, %q, %v; want %q, %q", i, sel, label, err, tc.selector, tc.label)
		}
	}
}

func TestLoadDashboardErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		// Truncated JSON.
		{"broken.json", "invalid dashboard JSON"},
		// A dashboard with nothing to check.
		{"no-panels.json", "dashboard has no panels"},
		// A missing file is named.
		{"absent.json", "absent.json"},
	} {
		_, err := deploy.LoadDashboard(filepath.Join("testdata", "dashboards", tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.file, err, tc.want)
		}
		var fe *deploy.FileError
		if tc.file != "absent.json" && !errors.As(err, &fe) {
			t.Errorf("%s: got %T, want *deploy.FileError", tc.file, err)
		}
	}
}
