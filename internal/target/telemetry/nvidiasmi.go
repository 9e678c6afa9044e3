package telemetry

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// GPUFields are the --query-gpu fields NvidiaSMI asks for, in the order
// ParseGPUCSV reads them (nvidia-smi --help-query-gpu). Drivers before
// R535 call the reasons clocks_throttle_reasons.active (LegacyReasons).
// enforced.power.limit is last: a recording made before it was asked
// (one field fewer) still parses, without the enforced limit.
var GPUFields = []string{
	"index", "uuid", "clocks.sm", "clocks.max.sm", "power.draw", "power.limit",
	"power.default_limit", "temperature.gpu", ReasonsField, "memory.used", "utilization.gpu",
	EnforcedLimitField,
}

// EnforcedLimitField is the power limit in force (Sample.EnforcedLimitW).
const EnforcedLimitField = "enforced.power.limit"

// ReasonsField and LegacyReasons name the active clock-event reasons.
const (
	ReasonsField  = "clocks_event_reasons.active"
	LegacyReasons = "clocks_throttle_reasons.active"
)

// AppFields are the --query-compute-apps fields, in ParseAppsCSV's order.
var AppFields = []string{"pid", "process_name", "gpu_uuid", "used_memory"}

// NvidiaSMI reads the GPUs with the nvidia-smi command (found on PATH
// unless Path is set).
type NvidiaSMI struct {
	Path       string
	legacy     bool // the driver knows only clocks_throttle_reasons.active
	noEnforced bool // the driver does not know enforced.power.limit
}

// Name is "nvidia-smi".
func (n *NvidiaSMI) Name() string { return "nvidia-smi" }

// Available reports whether the command can be found.
func (n *NvidiaSMI) Available() bool {
	_, err := exec.LookPath(n.path())
	return err == nil
}

func (n *NvidiaSMI) path() string {
	if n.Path != "" {
		return n.Path
	}
	return "nvidia-smi"
}

// Read runs nvidia-smi twice: the GPUs, then their compute processes.
func (n *NvidiaSMI) Read(ctx context.Context) (Reading, error) {
	out, err := n.run(ctx, cliarg.QueryGPU.Eq(strings.Join(n.fields(), ",")))
	switch {
	case err != nil && !n.noEnforced && rejects(err, EnforcedLimitField):
		n.noEnforced = true // ask without it: the power rule falls back to power.limit, and says so
		return n.Read(ctx)
	case err != nil && !n.legacy && rejects(err, ReasonsField):
		n.legacy = true // an older driver: ask again with the old name
		return n.Read(ctx)
	}
	if err != nil {
		return Reading{}, err
	}
	samples, err := ParseGPUCSV(bytes.NewReader(out), time.Now())
	if err != nil {
		return Reading{}, fmt.Errorf("nvidia-smi --query-gpu: %w", err)
	}
	apps, err := n.run(ctx, cliarg.QueryComputeApps.Eq(strings.Join(AppFields, ",")))
	if err != nil {
		return Reading{}, err
	}
	procs, err := ParseAppsCSV(bytes.NewReader(apps))
	if err != nil {
		return Reading{}, fmt.Errorf("nvidia-smi --query-compute-apps: %w", err)
	}
	return Reading{Samples: samples, Processes: procs, ProcessesKnown: true}, nil
}

// fields are the --query-gpu fields this driver answers to: GPUFields,
// with the old name of the reasons, without the enforced limit.
func (n *NvidiaSMI) fields() []string {
	var out []string
	for _, f := range GPUFields {
		switch {
		case f == ReasonsField && n.legacy:
			f = LegacyReasons
		case f == EnforcedLimitField && n.noEnforced:
			continue
		}
		out = append(out, f)
	}
	return out
}

// rejects reports whether err is nvidia-smi refusing field.
func rejects(err error, field string) bool {
	return strings.Contains(err.Error(), `"`+field+`" is not a valid field`)
}

// run runs nvidia-smi with a query and the CSV format, its output or an
// error quoting what it said.
func (n *NvidiaSMI) run(ctx context.Context, query string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, n.path(), query, cliarg.Format.Eq("csv,noheader,nounits"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		said := strings.TrimSpace(stderr.String() + " " + string(out))
		return nil, fmt.Errorf("nvidia-smi %s: %w: %s", query, err, said)
	}
	return out, nil
}

// ParseGPUCSV reads `nvidia-smi --query-gpu=GPUFields
// --format=csv,noheader,nounits`: one line per GPU, all taken at at.
func ParseGPUCSV(r io.Reader, at time.Time) ([]Sample, error) {
	rows, err := readCSV(r, len(GPUFields)-1, len(GPUFields))
	if err != nil {
		return nil, err
	}
	var out []Sample
	for i, row := range rows {
		s, err := gpuRow(row, at)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("no GPU listed")
	}
	return out, nil
}

// gpuRow reads one line of GPUFields.
func gpuRow(row []string, at time.Time) (Sample, error) {
	s := Sample{At: at, GPU: row[0], UUID: row[1]}
	nums := []*float64{&s.SMClockMHz, &s.SMClockMaxMHz, &s.PowerW, &s.PowerLimitW, &s.PowerDefaultLimitW, &s.TempC}
	for i, p := range nums {
		v, err := parseFloat(row[2+i])
		if err != nil {
			return s, fmt.Errorf("%s: %w", GPUFields[2+i], err)
		}
		*p = v
	}
	reasons := 2 + len(nums)
	if r := strings.TrimSpace(row[reasons]); r != "" && !strings.HasPrefix(r, "[") {
		mask, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(r), "0x"), 16, 64)
		if err != nil {
			return s, fmt.Errorf("%s: %q is not a hexadecimal bitmask", ReasonsField, r)
		}
		s.Reasons, s.HasReasons = mask, true
	}
	for i, p := range []*float64{&s.MemUsedMiB, &s.UtilPct} {
		v, err := parseFloat(row[reasons+1+i])
		if err != nil {
			return s, fmt.Errorf("%s: %w", GPUFields[reasons+1+i], err)
		}
		*p = v
	}
	if len(row) == len(GPUFields) {
		v, err := parseFloat(row[len(row)-1])
		if err != nil {
			return s, fmt.Errorf("%s: %w", EnforcedLimitField, err)
		}
		s.EnforcedLimitW, s.HasEnforcedLimit = v, !math.IsNaN(v)
	}
	return s, nil
}

// ParseAppsCSV reads `nvidia-smi --query-compute-apps=AppFields
// --format=csv,noheader,nounits`; no line is no process.
func ParseAppsCSV(r io.Reader) ([]Process, error) {
	rows, err := readCSV(r, len(AppFields), len(AppFields))
	if err != nil {
		return nil, err
	}
	out := []Process{}
	for i, row := range rows {
		pid, err := strconv.Atoi(strings.TrimSpace(row[0]))
		if err != nil {
			return nil, fmt.Errorf("line %d: pid %q is not a number", i+1, row[0])
		}
		mem, err := parseFloat(row[3])
		if err != nil {
			return nil, fmt.Errorf("line %d: used_memory: %w", i+1, err)
		}
		out = append(out, Process{PID: pid, Name: strings.TrimSpace(row[1]), GPUUUID: strings.TrimSpace(row[2]), UsedMiB: mem})
	}
	return out, nil
}

// readCSV reads comma-separated lines of lo to hi fields each, every line
// as many as the first.
func readCSV(r io.Reader, lo, hi int) ([][]string, error) {
	want := fmt.Sprint(hi)
	if lo != hi {
		want = fmt.Sprintf("%d (or %d, a recording without %s)", hi, lo, EnforcedLimitField)
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0 // every line as many fields as the first
	cr.TrimLeadingSpace = true
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("want %s comma-separated fields a line (--format=csv,noheader,nounits): %w", want, err)
	}
	if len(rows) > 0 && (len(rows[0]) < lo || len(rows[0]) > hi) {
		return nil, fmt.Errorf("want %s comma-separated fields a line (--format=csv,noheader,nounits): line 1 has %d", want, len(rows[0]))
	}
	return rows, nil
}
