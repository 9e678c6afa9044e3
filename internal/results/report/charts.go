package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is one rendered chart: an SVG drawn by gonum.org/v1/plot, and
// what the browser test checks in it.
type Chart struct {
	// ID is unique in the report; Title is also the plot's title.
	ID, Title string
	SVG       template.HTML
	// Colors are the data series' stroke colors (#RRGGBB, as the SVG
	// writes them), one per series: the browser test finds a drawn path
	// of each.
	Colors []string
	// Points counts the data points plotted.
	Points int
	// Caption says where the data come from.
	Caption string
	// XLabel, YLabel and Legend are the texts the chart draws besides its
	// title: axis labels with units, and the legend's entries.
	XLabel, YLabel string
	Legend         []string
	// Marks are the texts of the chart's annotations (a change point's
	// size, an event's name): the browser test finds each drawn.
	Marks []string
}

// palette is Okabe and Ito's colour-blind safe palette (yellow darkened
// to read on white), then greys.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0xA8, 0x90, 0x00, 0xff}, // dark yellow
	{0x33, 0x33, 0x33, 0xff}, // near black
}

// markColor draws annotations (knee, ceilings): not a data series.
var markColor = color.RGBA{0x88, 0x88, 0x88, 0xff}

func paletteColor(i int) color.RGBA { return palette[i%len(palette)] }

func hexColor(c color.RGBA) string { return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B) }

// Chart sizes; narrowChartWidth for a chart that shares its row with a
// table.
var (
	chartWidth       = vg.Points(560)
	narrowChartWidth = vg.Points(450)
	chartHeight      = vg.Points(300)
	dashed           = []vg.Length{vg.Points(5), vg.Points(3)}
)

// chartBuilder collects one plot's series.
type chartBuilder struct {
	id, title string
	caption   string
	// width is the chart's width (chartWidth when 0).
	width  vg.Length
	p      *plot.Plot
	colors []string
	legend []string
	marks  []string
	points int
	logX   bool
	logY   bool
}

// newChart starts a chart with its title and axis labels (with units).
func newChart(id, title, xLabel, yLabel string) *chartBuilder {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, v := range []*font.Variant{&p.Title.TextStyle.Font.Variant, &p.X.Label.TextStyle.Font.Variant, &p.Y.Label.TextStyle.Font.Variant,
		&p.X.Tick.Label.Font.Variant, &p.Y.Tick.Label.Font.Variant, &p.Legend.TextStyle.Font.Variant} {
		*v = sans
	}
	p.Title.Padding = vg.Points(8)
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.ThumbnailWidth = vg.Points(22)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(3)
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{}
	p.Add(gridLines())
	return &chartBuilder{id: id, title: title, p: p}
}

// sans is the variant of the Liberation fonts the charts use; the page's
// style falls back to Arial, which has the same metrics.
const sans font.Variant = "Sans"

func gridLines() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	g.Horizontal.Color = g.Vertical.Color
	return g
}

// look is how a series is drawn.
type look struct {
	dashed bool // P99 next to P50
	marks  bool // a dot at each point
	step   bool // a step function (an empirical CDF)
}

// series adds a line in palette colour i. Points with a NaN, or
// non-positive on a log axis, are left out.
func (b *chartBuilder) series(name string, i int, xys plotter.XYs, lk look) {
	xys = b.clean(xys)
	if len(xys) == 0 {
		return
	}
	c := paletteColor(i)
	l, err := plotter.NewLine(xys)
	if err != nil {
		return
	}
	l.Color = c
	l.Width = vg.Points(1.6)
	if lk.dashed {
		l.Dashes = dashed
	}
	if lk.step {
		l.StepStyle = plotter.PostStep
	}
	thumbs := []plot.Thumbnailer{l}
	b.p.Add(l)
	if lk.marks || len(xys) == 1 {
		s, err := plotter.NewScatter(xys)
		if err == nil {
			s.GlyphStyle.Color = c
			s.GlyphStyle.Radius = vg.Points(2.5)
			s.GlyphStyle.Shape = draw.CircleGlyph{}
			b.p.Add(s)
			thumbs = append(thumbs, s)
		}
	}
	b.addLegend(name, thumbs...)
	b.colors = append(b.colors, hexColor(c))
	b.points += len(xys)
}

// addLegend adds a legend entry.
func (b *chartBuilder) addLegend(name string, thumbs ...plot.Thumbnailer) {
	b.p.Legend.Add(name, thumbs...)
	b.legend = append(b.legend, name)
}

// clean drops the points a plot cannot draw.
func (b *chartBuilder) clean(xys plotter.XYs) plotter.XYs {
	var out plotter.XYs
	for _, p := range xys {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			continue
		}
		if (b.logX && p.X <= 0) || (b.logY && p.Y <= 0) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// vline marks x with a dashed grey line over the plot's y range and a
// label at its top; legend names it once.
func (b *chartBuilder) vline(x float64, label, legend string, ymin, ymax float64) {
	b.mark(plotter.XYs{{X: x, Y: ymin}, {X: x, Y: ymax}}, legend)
	if label != "" {
		b.label(x, ymax, label, 0)
	}
}

// hline marks y across the plot's x range.
func (b *chartBuilder) hline(y float64, legend string, xmin, xmax float64) {
	b.mark(plotter.XYs{{X: xmin, Y: y}, {X: xmax, Y: y}}, legend)
}

// mark draws a dashed grey marker line between two points; legend names
// it once ("" for none).
func (b *chartBuilder) mark(xys plotter.XYs, legend string) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return
	}
	l.Color = markColor
	l.Width = vg.Points(1)
	l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	b.p.Add(l)
	if legend != "" {
		b.addLegend(legend, l)
	}
}

// label writes text at (x, y), rotated by rot radians.
func (b *chartBuilder) label(x, y float64, text string, rot float64) {
	ls, err := plotter.NewLabels(plotter.XYLabels{XYs: []plotter.XY{{X: x, Y: y}}, Labels: []string{text}})
	if err != nil {
		return
	}
	for i := range ls.TextStyle {
		ls.TextStyle[i].Font.Variant = sans
		ls.TextStyle[i].Font.Size = vg.Points(7.5)
		ls.TextStyle[i].Color = color.RGBA{0x55, 0x55, 0x55, 0xff}
		ls.TextStyle[i].Rotation = rot
		if rot != 0 {
			ls.TextStyle[i].XAlign = draw.XRight
			ls.TextStyle[i].YAlign = draw.YCenter
		}
	}
	ls.Offset = vg.Point{X: vg.Points(2), Y: -vg.Points(2)}
	b.p.Add(ls)
}

// logAxis puts axis a on a log scale with 1-2-5 ticks.
func logAxis(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = ticks125{}
}

// ticks125 labels 1, 2 and 5 times the powers of ten within the range.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)) - 1; e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo*0.999 && v <= hi*1.001 {
				out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	if len(out) < 2 { // a narrow range: label its ends
		out = append(out, plot.Tick{Value: lo, Label: strconv.FormatFloat(lo, 'g', 3, 64)}, plot.Tick{Value: hi, Label: strconv.FormatFloat(hi, 'g', 3, 64)})
	}
	return out
}

// niceTicks labels a linear axis every 1, 2 or 5 times a power of ten,
// five to eight labels, with no more decimals than the step needs.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	mag := math.Pow(10, math.Floor(math.Log10(span/6)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if span/step <= 8 {
			break
		}
	}
	decimals := max(0, int(-math.Floor(math.Log10(step))))
	var out []plot.Tick
	for k := math.Ceil(lo / step); k*step <= hi+step*1e-9; k++ {
		v := k * step
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return out
}

// concurrencyAxis labels exactly the sweep's concurrencies on a log2 axis.
func concurrencyAxis(a *plot.Axis, cs []int) {
	a.Scale = plot.LogScale{}
	var ts plot.ConstantTicks
	for _, c := range cs {
		ts = append(ts, plot.Tick{Value: float64(c), Label: strconv.Itoa(c)})
	}
	a.Tick.Marker = ts
	if len(cs) > 0 {
		a.Min, a.Max = float64(slices.Min(cs))/1.15, float64(slices.Max(cs))*1.15
	}
}

// render draws the chart as SVG. A chart with no data is an error: the
// report says so instead of drawing empty axes.
func (b *chartBuilder) render() (Chart, error) {
	if b.points == 0 {
		return Chart{}, fmt.Errorf("chart %q has no data", b.title)
	}
	// The legend goes in a column right of the plot, where it hides no
	// data, drawn on a canvas of its own and merged in as <g class="legend">
	// so that the browser test tells data marks from legend thumbnails.
	leg := b.p.Legend
	b.p.Legend = plot.NewLegend()
	width := b.width
	if width == 0 {
		width = chartWidth
	}
	plotCanvas, legendCanvas := vgsvg.New(width, chartHeight), vgsvg.New(width, chartHeight)
	dc := draw.New(plotCanvas)
	legendWidth := leg.Rectangle(dc).Size().X + vg.Points(12)
	b.p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	titleHeight := b.p.Title.TextStyle.Rectangle(b.title).Size().Y + b.p.Title.Padding
	leg.Draw(draw.Crop(draw.New(legendCanvas), width-legendWidth+vg.Points(6), 0, 0, -titleHeight))
	var buf, legendBuf bytes.Buffer
	if _, err := plotCanvas.WriteTo(&buf); err != nil {
		return Chart{}, fmt.Errorf("chart %q: %w", b.title, err)
	}
	if _, err := legendCanvas.WriteTo(&legendBuf); err != nil {
		return Chart{}, fmt.Errorf("chart %q: %w", b.title, err)
	}
	svg, err := mergeLegend(buf.String(), legendBuf.String())
	if err != nil {
		return Chart{}, fmt.Errorf("chart %q: %w", b.title, err)
	}
	if i := strings.Index(svg, "<svg"); i > 0 { // drop the XML prolog: the SVG goes inline into HTML
		svg = svg[i:]
	}
	svg = strings.Replace(svg, "<svg ", fmt.Sprintf(`<svg role="img" aria-labelledby="%s-title" `, b.id), 1)
	svg = strings.Replace(svg, ">", fmt.Sprintf(`><title id="%s-title">%s</title>`, b.id, template.HTMLEscapeString(b.title)), 1)
	return Chart{ID: b.id, Title: b.title, SVG: template.HTML(svg), Colors: b.colors, Points: b.points, Caption: b.caption,
		XLabel: b.p.X.Label.Text, YLabel: b.p.Y.Label.Text, Legend: b.legend, Marks: b.marks}, nil
}

// svgEnd is how vgsvg closes a canvas: the group that flips the y axis,
// then the document.
const svgEnd = "</g>\n</svg>\n"

// mergeLegend moves the drawing of legend (a vgsvg document of the same
// size) into plot's flipped group, as <g class="legend">.
func mergeLegend(plot, legend string) (string, error) {
	open := strings.Index(legend, "<g transform=\"scale(1, -1)")
	if open < 0 || !strings.HasSuffix(legend, svgEnd) || !strings.HasSuffix(plot, svgEnd) {
		return "", fmt.Errorf("unexpected SVG from gonum.org/v1/plot/vg/vgsvg: its flipped group or closing tags moved")
	}
	body := legend[open : len(legend)-len(svgEnd)]
	body = body[strings.Index(body, ">")+1:]
	return plot[:len(plot)-len(svgEnd)] + `<g class="legend">` + body + "</g>\n" + svgEnd, nil
}
