package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The environment of TestReportInBrowser.
const (
	// envReportDir names a results folder to open instead of testdata's
	// (a real one from make bench, for the README's screenshot).
	envReportDir = "VLLMPERF_REPORT_DIR"
	// envScreenshot, when set, is where the screenshot is written (PNG):
	// docs/img/report.png for the README.
	envScreenshot = "VLLMPERF_SCREENSHOT"
	// envChromium overrides the browser found on PATH.
	envChromium = "VLLMPERF_CHROMIUM"
)

// The browser's viewport, which is also the screenshot's size.
const viewportWidth, viewportHeight = 1280, 1500

// chromium finds Debian's chromium (or VLLMPERF_CHROMIUM); without one the
// test skips, or fails under CI=true.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envChromium); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH: apt-get install chromium (or set " + envChromium + ")"
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; the browser test is required in CI", msg)
	}
	t.Skip(msg)
	return ""
}

// browser starts a headless Chromium with a fresh profile, quiet on the
// network, and returns its tab's context.
func browser(t *testing.T, exe string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless, // --headless (with --hide-scrollbars, --mute-audio)
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("force-color-profile", "srgb"), // screenshots in the page's own colours
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(viewportWidth, viewportHeight),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// pageProblems collects what the page must not do: log errors, throw, or
// fetch anything that is not the file itself.
type pageProblems struct {
	mu       sync.Mutex
	errors   []string
	requests []string
}

func (p *pageProblems) listen(ctx context.Context) error {
	return chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, fmt.Sprintf("%s%s", a.Value, a.Description))
				}
				p.errors = append(p.errors, "console."+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			p.errors = append(p.errors, fmt.Sprintf("exception at %d:%d: %s", ev.ExceptionDetails.LineNumber+1, ev.ExceptionDetails.ColumnNumber+1, ev.ExceptionDetails.Text))
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				p.errors = append(p.errors, fmt.Sprintf("log %s: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			u := ev.Request.URL
			if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
				p.requests = append(p.requests, u)
			}
		}
	})
}

// chartInfo is what the page says about one figure.chart.
type chartInfo struct {
	ID     string   `json:"id"`
	HasSVG bool     `json:"hasSVG"`
	Width  float64  `json:"width"`
	Height float64  `json:"height"`
	Title  string   `json:"title"`
	Texts  []string `json:"texts"`
	XLabel string   `json:"xlabel"`
	YLabel string   `json:"ylabel"`
	Legend []string `json:"legend"`
	Marks  []string `json:"marks"`
	Colors []string `json:"colors"`
	// Drawn counts, by series colour, the drawn data marks (paths outside
	// the legend with a non-empty box); Longest is the longest one (px).
	Drawn   map[string]int `json:"drawn"`
	Longest float64        `json:"longest"`
}

// chartsJS reads every chart of the page as the browser drew it.
const chartsJS = `Array.from(document.querySelectorAll('figure.chart')).map(f => {
  const svg = f.querySelector('svg');
  const info = {id: f.id, hasSVG: !!svg, width: 0, height: 0, title: '', texts: [],
    xlabel: f.dataset.xlabel || '', ylabel: f.dataset.ylabel || '',
    legend: (f.dataset.legend || '').split('\n').filter(Boolean),
    marks: (f.dataset.marks || '').split('\n').filter(Boolean),
    colors: (f.dataset.colors || '').split(',').filter(Boolean), drawn: {}, longest: 0};
  if (!svg) return info;
  const r = svg.getBoundingClientRect();
  info.width = r.width; info.height = r.height;
  const t = svg.querySelector('title'); info.title = t ? t.textContent : '';
  info.texts = Array.from(svg.querySelectorAll('text')).map(e => e.textContent);
  for (const p of svg.querySelectorAll('path')) {
    if (p.closest('g.legend')) continue;
    const st = (p.getAttribute('style') || '').toUpperCase();
    const b = p.getBBox();
    if (b.width === 0 && b.height === 0) continue;
    for (const c of new Set(info.colors)) {
      if (st.includes('STROKE:' + c) || st.includes('FILL:' + c)) {
        info.drawn[c] = (info.drawn[c] || 0) + 1;
        info.longest = Math.max(info.longest, p.getTotalLength());
      }
    }
  }
  return info;
})`

// TestReportInBrowser opens report.html in headless Chromium: the page
// loads with no console error and no request for anything outside the
// file, every chart is drawn with its title, axis labels, legend and data
// marks, and a screenshot is not blank. The report carries the history
// section (report --history) drawn from the history package's testdata
// store.
func TestReportInBrowser(t *testing.T) {
	exe := chromium(t)
	dir := os.Getenv(envReportDir)
	if dir == "" {
		dir = copyFolder(t, "testdata/results")
	}
	r, err := Load(dir)
	require.NoError(t, err)
	r.History, err = LoadHistory(testStore, HistoryOptions{MaxBenchmarks: ReportBenchmarks, Thresholds: repoThresholds(t)})
	require.NoError(t, err)
	paths, err := WriteFiles(r)
	require.NoError(t, err)
	trends, pareto := 0, false
	for _, c := range openInBrowser(t, exe, paths[0], r.BuildCharts().All(), dir) {
		if strings.HasPrefix(c.ID, "trend-") {
			trends++
		}
		if c.ID == "pareto" {
			// every sweep a series, the frontier drawn and named
			pareto = true
			assert.Len(t, c.Colors, len(r.Sweeps), "the Pareto chart's series: one per sweep")
			assert.Contains(t, c.Texts, "Pareto frontier")
			assert.Contains(t, c.Texts, "output tokens/s per GPU")
		}
	}
	assert.True(t, pareto, "the page draws the Pareto chart (tokens/s per user against per GPU)")
	assert.Equal(t, ReportBenchmarks*len(TrendUnits), trends, "the history section's trend charts")
}

// TestRampInBrowser opens the report of the ramp-ups' folder: its ramp
// charts are drawn with their data, legends and the two rates' labels.
func TestRampInBrowser(t *testing.T) {
	exe := chromium(t)
	dir := copyFolder(t, "testdata/ramp")
	r, err := Load(dir)
	require.NoError(t, err)
	paths, err := WriteFiles(r)
	require.NoError(t, err)
	ramps := 0
	for _, c := range openInBrowser(t, exe, paths[0], r.BuildCharts().All(), dir) {
		if strings.HasPrefix(c.ID, "ramp-") {
			ramps++
		}
	}
	assert.Equal(t, 2*len(r.Ramps), ramps, "a throughput and a latency chart per ramp-up")
}

// TestHistoryInBrowser opens history.html of the testdata store (16 runs
// of an unchanged simulator, then 8 with --sim-slowdown 1.04, a note at
// the first slowed run): every chart drawn as in the report, the change
// points and the known event marked where the check found them.
func TestHistoryInBrowser(t *testing.T) {
	exe := chromium(t)
	h, err := LoadHistory(testStore, HistoryOptions{Thresholds: repoThresholds(t)})
	require.NoError(t, err)
	path, err := WriteHistory(t.TempDir(), h)
	require.NoError(t, err)
	charts := openInBrowser(t, exe, path, h.Charts(), testStore)
	changeHex := hexColor(changeColor)
	changed, evented := 0, 0
	for _, c := range charts {
		if slices.Contains(c.Colors, changeHex) {
			changed++
			assert.Positive(t, c.Drawn[changeHex], "%s: the change point's line is drawn", c.ID)
		}
		if slices.Contains(c.Colors, hexColor(markColor)) {
			evented++
		}
	}
	t.Logf("%d charts, %d with a change point, %d with the event", len(charts), changed, evented)
	assert.Positive(t, changed, "some chart shows a change point")
	assert.Equal(t, len(charts), evented, "every chart shows the known event")
}

// openInBrowser opens the page at path in Chromium and checks it: no
// error, nothing fetched, every chart of want drawn with its texts, marks
// and data, a screenshot that is not blank (written to
// VLLMPERF_SCREENSHOT when set). It returns what the page says of its
// charts.
func openInBrowser(t *testing.T, exe, path string, want []Chart, source string) []chartInfo {
	t.Helper()
	htmlPath, err := filepath.Abs(path)
	require.NoError(t, err)
	ctx := browser(t, exe)
	var problems pageProblems
	require.NoError(t, problems.listen(ctx), "start %s", exe)
	page := (&url.URL{Scheme: "file", Path: htmlPath}).String()
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(viewportWidth, viewportHeight),
		chromedp.Navigate(page),
		chromedp.WaitReady(chromedp.CSS("footer")),
	)
	require.NoError(t, err, "open %s in %s", page, exe)
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartInfo](chartsJS))
	require.NoError(t, err, "read the charts")
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err, "screenshot")

	problems.mu.Lock()
	assert.Empty(t, problems.errors, "the page logged errors")
	assert.Empty(t, problems.requests, "the page asked for something outside itself")
	problems.mu.Unlock()

	require.Len(t, charts, len(want), "charts on the page")
	for i, c := range charts {
		t.Run(c.ID, func(t *testing.T) {
			assert.Equal(t, want[i].ID, c.ID)
			require.True(t, c.HasSVG, "no <svg>")
			assert.Greater(t, c.Width, 300.0, "drawn width (px)")
			assert.Greater(t, c.Height, 150.0, "drawn height (px)")
			assert.NotEmpty(t, c.Title)
			for _, text := range append(append([]string{c.Title, c.XLabel, c.YLabel}, c.Legend...), c.Marks...) {
				assert.Contains(t, c.Texts, text, "the chart draws %q", text)
			}
			require.NotEmpty(t, c.Colors, "no data series")
			for _, col := range c.Colors {
				assert.Positive(t, c.Drawn[col], "no data mark drawn in %s", col)
			}
			assert.Greater(t, c.Longest, 20.0, "the longest data mark (px)")
		})
	}

	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	assert.Equal(t, image.Pt(viewportWidth, viewportHeight), img.Bounds().Size())
	mean, std, colours := pixelStats(img)
	t.Logf("screenshot: %v, luminance mean %.1f, std %.1f, %d distinct colours", img.Bounds().Size(), mean, std, colours)
	assert.Greater(t, std, 10.0, "the screenshot is blank: luminance hardly varies")
	assert.Greater(t, colours, 50, "the screenshot is blank: too few colours")
	if out := os.Getenv(envScreenshot); out != "" {
		require.NoError(t, os.WriteFile(out, shot, 0o644))
		t.Logf("screenshot of %s written to %s", source, out)
	}
	return charts
}

// pixelStats returns the mean and standard deviation of the image's
// luminance (0–255) and how many distinct colours it has.
func pixelStats(img image.Image) (mean, std float64, colours int) {
	b := img.Bounds()
	seen := map[[3]uint32]bool{}
	var sum, sq float64
	n := float64(b.Dx() * b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			l := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(bl)) / 257
			sum += l
			sq += l * l
		}
	}
	mean = sum / n
	return mean, math.Sqrt(math.Max(sq/n-mean*mean, 0)), len(seen)
}
