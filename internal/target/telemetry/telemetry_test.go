package telemetry

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// fakeSMI puts testdata's fake nvidia-smi first on PATH, answering with
// the recorded gpu and apps CSV files.
func fakeSMI(t *testing.T, gpu, apps string) {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(filepath.Join("testdata", "fake-nvidia-smi"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_NVSMI_GPU", filepath.Join("testdata", gpu))
	t.Setenv("FAKE_NVSMI_APPS", filepath.Join("testdata", apps))
}

func TestParseGPUCSV(t *testing.T) {
	for _, tc := range []struct {
		file    string
		gpus    int
		reasons []string // ReasonNames of GPU 0
		slow    []string // its Slowdowns: the reasons that make a run INVALID
		power   bool     // GPU 0 reports power
		wantErr string
	}{
		{file: "gpu-normal.csv", gpus: 2, power: true},
		// The power cap of a limit lowered to 450 of the default 700 W.
		{file: "gpu-power-limit-lowered.csv", gpus: 2, reasons: []string{"SW power cap"}, slow: []string{"SW power cap below the board's default power limit"}, power: true},
		// The power cap with no default limit given: a lowered one cannot be ruled out.
		{file: "gpu-power-cap-no-default.csv", gpus: 1, reasons: []string{"SW power cap"}, slow: []string{"SW power cap (the power limit or the board's default unknown: a lowered limit cannot be ruled out)"}, power: true},
		// enforced.power.limit read: 450 W in force while power.limit says
		// the default 700 W (a limiter outside the board), INVALID.
		{file: "gpu-enforced-lowered.csv", gpus: 1, reasons: []string{"SW power cap"}, slow: []string{"SW power cap below the board's default power limit"}, power: true},
		{file: "gpu-enforced-normal.csv", gpus: 1, power: true},
		{file: "gpu-thermal.csv", gpus: 2, reasons: []string{"SW thermal slowdown", "HW thermal slowdown"}, slow: []string{"SW thermal slowdown", "HW thermal slowdown"}, power: true},
		// Recorded on an H200 (TestRecordedH200): idle, then at its default
		// 700 W limit under a full load, which is no slowdown.
		{file: "gpu-h200-idle.csv", gpus: 1, power: true},
		{file: "gpu-h200-at-power-limit.csv", gpus: 1, reasons: []string{"SW power cap"}, power: true},
		// [N/A] power is unknown, not zero; GpuIdle does not invalidate.
		{file: "gpu-no-power.csv", gpus: 1},
		{file: "gpu-bad.csv", wantErr: "not a hexadecimal bitmask"},
		{file: "apps-server.csv", wantErr: "fields a line"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ParseGPUCSV(f, time.Now())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.gpus {
				t.Fatalf("%d GPUs, want %d", len(got), tc.gpus)
			}
			if names := ReasonNames(got[0].Reasons); strings.Join(names, ",") != strings.Join(tc.reasons, ",") {
				t.Errorf("reasons %v, want %v", names, tc.reasons)
			}
			if slow := Slowdowns(got[0]); strings.Join(slow, ",") != strings.Join(tc.slow, ",") {
				t.Errorf("slowdowns %q, want %q", slow, tc.slow)
			}
			if !got[0].HasReasons {
				t.Error("the reasons were not read")
			}
			if math.IsNaN(got[0].PowerW) == tc.power {
				t.Errorf("power %v, want known=%v", got[0].PowerW, tc.power)
			}
		})
	}
}

// record samples the fake nvidia-smi for a short run.
func record(t *testing.T, gpu, apps string, own map[int]bool) Summary {
	t.Helper()
	fakeSMI(t, gpu, apps)
	smi := &NvidiaSMI{}
	if !smi.Available() {
		t.Fatal("the fake nvidia-smi is not found on PATH")
	}
	r := Start(context.Background(), 20*time.Millisecond, smi)
	time.Sleep(100 * time.Millisecond) // the run being measured
	return Summarize(r.Stop(), own)
}

// server are the PIDs of apps-server.csv: the server's own processes.
var server = map[int]bool{31337: true, 31338: true}

func TestSummarizeFixtures(t *testing.T) {
	for _, tc := range []struct {
		name, gpu, apps string
		throttled       string // a word of the evidence; "" for none
		foreign         string
	}{
		{name: "normal", gpu: "gpu-normal.csv", apps: "apps-server.csv"},
		{name: "power limit lowered", gpu: "gpu-power-limit-lowered.csv", apps: "apps-server.csv", throttled: "GPU 0: SW power cap below the board's default power limit in"},
		{name: "thermal", gpu: "gpu-thermal.csv", apps: "apps-server.csv", throttled: "GPU 0: HW thermal slowdown"},
		{name: "shared-gpu-busy", gpu: "gpu-normal.csv", apps: "apps-shared.csv", foreign: "pid 48211 /usr/bin/python train.py"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := record(t, tc.gpu, tc.apps, server)
			if !s.Available || s.Samples < 4 || !s.ProcessesKnown {
				t.Fatalf("summary %+v: want samples of 2 GPUs, read at least twice, with processes", s)
			}
			if got := strings.Join(s.Throttled, "\n"); (tc.throttled == "") != (got == "") || !strings.Contains(got, tc.throttled) {
				t.Errorf("throttle evidence %q, want %q", got, tc.throttled)
			}
			if got := strings.Join(s.Foreign, "\n"); (tc.foreign == "") != (got == "") || !strings.Contains(got, tc.foreign) {
				t.Errorf("foreign processes %q, want %q", got, tc.foreign)
			}
			m := s.Metrics(1000)
			if w := m[units.PowerAvgW]; w < 800 || w > 1400 {
				t.Errorf("power-avg-w = %v, want the two GPUs' sum", w)
			}
			if j := m[units.JoulesPerToken]; !(j > 0) || math.Abs(j-s.EnergyJ/1000) > 1e-9 {
				t.Errorf("j/tok = %v, want energy %v J / 1000 tokens", j, s.EnergyJ)
			}
		})
	}
}

// TestRecordedH200 reads what nvidia-smi said on a real NVIDIA H200
// (driver 580.159.04, 2026-12-04) under a full load from another process:
// a bf16 8192³ GEMM loop, which held the board at its default 700 W limit
// (SW power cap in every sample, 1470–1530 of 1980 MHz, 664 TFLOP/s). The
// power cap is reported, not INVALID; the other process is.
func TestRecordedH200(t *testing.T) {
	fakeSMI(t, "gpu-h200-at-power-limit.csv", "apps-h200-load.csv")
	r := Start(context.Background(), 20*time.Millisecond, &NvidiaSMI{})
	time.Sleep(60 * time.Millisecond)
	s := Summarize(r.Stop(), nil)
	if len(s.Throttled) != 0 {
		t.Errorf("throttle evidence %q: the board's own power limit is no slowdown", s.Throttled)
	}
	if got := strings.Join(s.AtPowerLimit, "\n"); !strings.Contains(got, "GPU 0: SW power cap at the board's default power limit in") || !strings.Contains(got, "691 of 700 W, default 700 W (power.limit: the enforced limit was not read)") {
		t.Errorf("power-limit evidence %q, want GPU 0 at its default 700 W limit", got)
	}
	if got := strings.Join(s.Foreign, "\n"); !strings.Contains(got, "pid 493 python3 using 1130 MiB") {
		t.Errorf("foreign processes %q, want the GEMM loop's python3", got)
	}
}

func TestLegacyDriver(t *testing.T) {
	t.Setenv("FAKE_NVSMI_LEGACY", "1")
	s := record(t, "gpu-power-limit-lowered.csv", "apps-none.csv", nil)
	if !s.Available || len(s.Throttled) == 0 {
		t.Fatalf("an older driver (clocks_throttle_reasons.active) gave %+v", s)
	}
}

func TestNotAvailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		recs []Recording
		why  string
	}{
		{name: "no source", why: "no GPU telemetry source"},
		{name: "failing source", recs: []Recording{{Source: "nvidia-smi", Errors: []string{"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"}}}, why: "couldn't communicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.recs, nil)
			if s.Available || !strings.Contains(s.Why, tc.why) || len(s.Metrics(10)) != 0 {
				t.Errorf("summary %+v: want not available because %q, and no power units", s, tc.why)
			}
		})
	}
	if n := (&NvidiaSMI{Path: filepath.Join(t.TempDir(), "nvidia-smi")}); n.Available() {
		t.Error("a missing nvidia-smi is available")
	}
}

// dcgmServer serves a recorded dcgm-exporter exposition as an exporter
// that collects between any two reads: its energy counter moves by 1 J a
// read (fresh.go).
func dcgmServer(t *testing.T, file string) string {
	return serveDCGM(t, file, true)
}

// energyLine is the total energy counter's sample in a fixture.
var energyLine = regexp.MustCompile(`(?m)^(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{[^}]*\}) (\d+)$`)

// serveDCGM serves file; live moves its energy counter at every read,
// else every read answers the same page (an exporter that has not
// collected since).
func serveDCGM(t *testing.T, file string, live bool) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		page := body
		if n := reads.Add(1); live {
			page = energyLine.ReplaceAllFunc(body, func(m []byte) []byte {
				sub := energyLine.FindSubmatch(m)
				v, _ := strconv.ParseInt(string(sub[2]), 10, 64)
				return fmt.Appendf(nil, "%s %d", sub[1], v+n*1000)
			})
		}
		_, _ = w.Write(page)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func TestDCGM(t *testing.T) {
	for _, tc := range []struct {
		file      string
		throttled string
		atLimit   string // a word of the power-cap-at-default evidence
		clock     float64
	}{
		{file: "dcgm-normal.prom", clock: 1980},
		{file: "dcgm-thermal.prom", throttled: "GPU 0: HW thermal slowdown", clock: 1365},
		// The SW power cap with the limit at DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF.
		{file: "dcgm-power-cap.prom", atLimit: "GPU 0: SW power cap at the board's default power limit in", clock: 1500},
		// The same without DCGM_FI_DEV_ENFORCED_POWER_LIMIT: power.limit at
		// the default, but the draw (415 W) far under it, so a limit
		// enforced from outside the board cannot be ruled out.
		{file: "dcgm-power-cap-no-enforced.prom", throttled: "GPU 0: SW power cap with the draw under the board's default limit and the enforced limit not read", clock: 1500},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d := NewDCGM(dcgmServer(t, tc.file))
			rd, err := d.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(rd.Samples) != 1 || rd.Samples[0].SMClockMHz != tc.clock || rd.Samples[0].UUID == "" || rd.ProcessesKnown {
				t.Fatalf("samples %+v: want GPU 0 at %v MHz with its UUID, no process list", rd.Samples, tc.clock)
			}
			if smp := rd.Samples[0]; smp.PowerLimitW != 700 || smp.PowerDefaultLimitW != 700 {
				t.Errorf("power limit %v W, default %v W: want 700 and 700", smp.PowerLimitW, smp.PowerDefaultLimitW)
			}
			r := Start(context.Background(), 20*time.Millisecond, d)
			time.Sleep(60 * time.Millisecond)
			s := Summarize(r.Stop(), nil)
			if got := strings.Join(s.Throttled, "\n"); (tc.throttled == "") != (got == "") || !strings.Contains(got, tc.throttled) {
				t.Errorf("throttle evidence %q, want %q", got, tc.throttled)
			}
			if got := strings.Join(s.AtPowerLimit, "\n"); (tc.atLimit == "") != (got == "") || !strings.Contains(got, tc.atLimit) {
				t.Errorf("power-limit evidence %q, want %q", got, tc.atLimit)
			}
			if s.PowerW != 415.207 || s.ProcessesKnown {
				t.Errorf("power %v W, processes known %v: want 415.207 W and no process list", s.PowerW, s.ProcessesKnown)
			}
		})
	}
}

func TestDCGMWrongExporter(t *testing.T) {
	// A vLLM /metrics page (the project's recorded fixtures) is no
	// dcgm-exporter.
	_, err := NewDCGM(dcgmServer(t, "../../../../fixtures/metrics/crafted-python-client.prom")).Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not a dcgm-exporter") {
		t.Fatalf("a vLLM /metrics page read as dcgm-exporter's: %v", err)
	}
}

// TestRealNvidiaSMI reads this machine's GPUs when it has any (a GPU
// runner): the field names must be ones its driver answers to.
func TestRealNvidiaSMI(t *testing.T) {
	smi := &NvidiaSMI{}
	if !smi.Available() {
		t.Skip("no nvidia-smi on PATH (a machine without NVIDIA GPUs)")
	}
	rd, err := smi.Read(context.Background())
	if err != nil {
		t.Fatalf("nvidia-smi on this machine: %v", err)
	}
	if len(rd.Samples) == 0 || !rd.ProcessesKnown {
		t.Fatalf("reading %+v: want every GPU and the process list", rd)
	}
	for _, s := range rd.Samples {
		if s.UUID == "" || math.IsNaN(s.SMClockMaxMHz) || !s.HasReasons {
			t.Errorf("GPU %s: %+v: want its UUID, max SM clock and clock-event reasons", s.GPU, s)
		}
		if !math.IsNaN(s.PowerLimitW) && math.IsNaN(s.PowerDefaultLimitW) {
			t.Errorf("GPU %s: power limit %v W but no default: a power cap could not be told from a lowered limit", s.GPU, s.PowerLimitW)
		}
	}
}

// TestOnlyTheServersGPUs: with VLLMPERF_GPUS=1 the process on GPU 0 is
// another server's (one server per GPU set), not a foreign one on ours.
func TestOnlyTheServersGPUs(t *testing.T) {
	fakeSMI(t, "gpu-normal.csv", "apps-shared.csv")
	t.Setenv(envGPUs, "1")
	t.Setenv(EnvTelemetry, ModeOn)
	set, err := SettingsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	srcs, required := set.Sources(true)
	if len(srcs) != 1 || !required {
		t.Fatalf("sources %v, required %v", srcs, required)
	}
	r := Start(context.Background(), 20*time.Millisecond, srcs...)
	time.Sleep(60 * time.Millisecond)
	s := Summarize(r.Stop(), map[int]bool{31338: true})
	if len(s.Foreign) != 0 || s.Samples < 2 || math.Abs(s.PowerW-405.10) > 1e-9 {
		t.Errorf("GPU 1 only: foreign %v, %d samples, %v W; want none, GPU 1's samples, its 405.1 W", s.Foreign, s.Samples, s.PowerW)
	}
	t.Setenv(EnvTelemetry, "sometimes")
	if _, err := SettingsFromEnv(); err == nil || !strings.Contains(err.Error(), "want auto, on or off") {
		t.Errorf("a bad %s: %v", EnvTelemetry, err)
	}
	// Unset is envvar's default, which must be a mode.
	t.Setenv(EnvTelemetry, "")
	if set, err := SettingsFromEnv(); err != nil || set.Mode != ModeAuto {
		t.Errorf("%s unset: mode %q, %v; want %s", EnvTelemetry, set.Mode, err, ModeAuto)
	}
}

// TestAveragePower: the mean of the reads' summed draw, exactly the
// reading when every read says the same, whatever the number of reads
// (the DCGM test read 3 times once and got 415.20700000000005).
func TestAveragePower(t *testing.T) {
	at := func(i int) time.Time { return time.Unix(0, int64(i)*int64(time.Second)) }
	constant := func(n int, w float64) []Sample {
		var out []Sample
		for i := range n {
			out = append(out, Sample{At: at(i), GPU: "0", PowerW: w})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		samples []Sample
		want    float64
		ok      bool
	}{
		{name: "one read", samples: constant(1, 415.207), want: 415.207, ok: true},
		{name: "three equal reads", samples: constant(3, 415.207), want: 415.207, ok: true},
		{name: "seven equal reads", samples: constant(7, 415.207), want: 415.207, ok: true},
		{name: "two GPUs summed per read", samples: []Sample{
			{At: at(0), GPU: "0", PowerW: 300}, {At: at(0), GPU: "1", PowerW: 100},
			{At: at(1), GPU: "0", PowerW: 200}, {At: at(1), GPU: "1", PowerW: 100},
		}, want: 350, ok: true},
		{name: "a read without power", samples: []Sample{{At: at(0), PowerW: 300}, {At: at(1), PowerW: math.NaN()}}},
		{name: "no reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := averagePower(tc.samples)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Errorf("averagePower = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestDCGMMIG: the MIG instances of one GPU are kept apart (GPU_I_ID),
// named in the evidence, and the GPU's draw, which each instance
// repeats, is counted once.
func TestDCGMMIG(t *testing.T) {
	d := NewDCGM(dcgmServer(t, "dcgm-mig.prom"))
	rd, err := d.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Samples) != 2 || rd.Samples[0].Instance != "1" || rd.Samples[1].Instance != "2" || rd.Samples[0].MemUsedMiB != 40210 || rd.Samples[1].MemUsedMiB != 1024 {
		t.Fatalf("samples %+v: want instances 1 and 2 of GPU 0, each with its own memory", rd.Samples)
	}
	start := rd.Samples[0].At.Add(-time.Second)
	s := Summarize([]Recording{{Source: d.Name(), Samples: rd.Samples, Start: start, End: start.Add(2 * time.Second)}}, nil)
	got := strings.Join(s.Throttled, "\n")
	for _, want := range []string{"GPU 0 MIG instance 1 (3g.40gb): HW thermal slowdown in 1 of 1 samples", "GPU 0 MIG instance 2 (3g.40gb): HW thermal slowdown"} {
		if !strings.Contains(got, want) {
			t.Errorf("evidence %q lacks %q", got, want)
		}
	}
	if s.PowerW != 512.5 {
		t.Errorf("power %v W, want the GPU's 512.5 W once, not once per instance", s.PowerW)
	}
}

// TestDCGMStale: dcgm-exporter's values that are not shown to describe
// the run (an exporter that did not collect during it, or timestamps
// older than its start) leave no sample: NOT_AVAILABLE with the collect
// interval named, never a pass.
func TestDCGMStale(t *testing.T) {
	t.Run("beside a fresh source", func(t *testing.T) {
		fakeSMI(t, "gpu-normal.csv", "apps-server.csv")
		r := Start(context.Background(), 20*time.Millisecond, &NvidiaSMI{}, NewDCGM(serveDCGM(t, "dcgm-normal.prom", false)))
		time.Sleep(60 * time.Millisecond)
		s := Summarize(r.Stop(), server)
		if !s.Available || len(s.Unread) != 1 || !strings.Contains(s.Unread[0], "the values did not change") || len(s.Sources) != 1 {
			t.Errorf("summary %+v: want nvidia-smi's samples, and the stale exporter named as unread", s)
		}
	})
	t.Run("values never change", func(t *testing.T) {
		r := Start(context.Background(), 20*time.Millisecond, NewDCGM(serveDCGM(t, "dcgm-normal.prom", false)))
		time.Sleep(60 * time.Millisecond)
		s := Summarize(r.Stop(), nil)
		if s.Available || !strings.Contains(s.Why, "the values did not change in") || !strings.Contains(s.Why, "-c 1000") {
			t.Errorf("summary %+v: want not available, the values unchanged and the collect interval named", s)
		}
	})
	page, err := os.ReadFile(filepath.Join("testdata", "dcgm-normal.prom"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stamp := func(at time.Time) []Sample {
		// Every sample line gets the exposition timestamp at.
		lines := strings.Split(strings.TrimSpace(string(page)), "\n")
		for i, l := range lines {
			if !strings.HasPrefix(l, "#") {
				lines[i] = fmt.Sprintf("%s %d", l, at.UnixMilli())
			}
		}
		fams, err := scrape.ParseFamilies(strings.NewReader(strings.Join(lines, "\n")), "dcgm", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		samples, err := FromDCGM(fams)
		if err != nil {
			t.Fatal(err)
		}
		return samples
	}
	for _, tc := range []struct {
		name      string
		collected time.Time
		available bool
	}{
		{"collected 30 s before the run", start.Add(-30 * time.Second), false},
		{"collected during the run", start.Add(500 * time.Millisecond), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := Recording{Source: "dcgm", Cached: true, Samples: stamp(tc.collected), Start: start, End: start.Add(time.Second)}
			s := Summarize([]Recording{rec}, nil)
			if s.Available != tc.available || (!tc.available && !strings.Contains(s.Why, "every value is older than the run")) {
				t.Errorf("summary %+v: want available %v", s, tc.available)
			}
		})
	}
}

// TestDriverWithoutEnforcedLimit: a driver that refuses
// enforced.power.limit is asked again without it; the power rule then
// falls back to power.limit, and the lowered limit is still seen.
func TestDriverWithoutEnforcedLimit(t *testing.T) {
	t.Setenv("FAKE_NVSMI_NO_ENFORCED", "1")
	s := record(t, "gpu-power-limit-lowered.csv", "apps-none.csv", nil)
	if !s.Available || len(s.Throttled) == 0 || !strings.Contains(s.Throttled[0], "(power.limit: the enforced limit was not read)") {
		t.Fatalf("a driver without enforced.power.limit gave %+v", s)
	}
}
