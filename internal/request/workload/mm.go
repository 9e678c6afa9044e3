package workload

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	mrand "math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Images follow vllm bench serve's random-mm data set (vLLM 0.11, commit
// 005a810bc40f, vllm/benchmarks/datasets.py RandomMultiModalDataset):
// each request carries --random-mm-base-items-per-request images after
// its random text, each of a size drawn from --random-mm-bucket-config
// ("{(height, width, frames): probability, ...}"; frames 1 is an image),
// random pixels sent as a base64 JPEG data: URL.

// Bucket is one size of --random-mm-bucket-config and its probability.
type Bucket struct {
	Height, Width int
	P             float64
}

// MM is a workload's images.
type MM struct {
	// Items is how many images each request carries (≥ 1).
	Items int
	// Buckets are the image sizes, drawn by probability (normalised).
	Buckets []Bucket
}

// imagesPerBucket is how many different images each bucket's pool holds:
// made once, before they are sent (encoding a large JPEG takes longer than
// a request should wait), and taken in turn.
const imagesPerBucket = 4

// bucketEntry is one "(h, w, t): p" of a bucket config.
var bucketEntry = regexp.MustCompile(`^\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\s*:\s*([0-9.eE+-]+)$`)

// ParseBucketConfig reads --random-mm-bucket-config, vLLM's Python dict
// literal: "{(896, 896, 1): 0.5, (224, 224, 1): 0.5}".
func ParseBucketConfig(s string) ([]Bucket, error) {
	body, ok := strings.CutPrefix(strings.TrimSpace(s), "{")
	body, ok2 := strings.CutSuffix(body, "}")
	if !ok || !ok2 || strings.TrimSpace(body) == "" {
		return nil, fmt.Errorf("%q: want {(HEIGHT, WIDTH, 1): PROBABILITY, ...}, e.g. \"{(896, 896, 1): 1.0}\"", s)
	}
	var out []Bucket
	sum := 0.0
	for _, e := range splitEntries(body) {
		m := bucketEntry.FindStringSubmatch(strings.TrimSpace(e))
		if m == nil {
			return nil, fmt.Errorf("%q: entry %q: want (HEIGHT, WIDTH, FRAMES): PROBABILITY", s, strings.TrimSpace(e))
		}
		h, _ := strconv.Atoi(m[1])
		w, _ := strconv.Atoi(m[2])
		frames, _ := strconv.Atoi(m[3])
		p, err := strconv.ParseFloat(m[4], 64)
		switch {
		case err != nil || p < 0:
			return nil, fmt.Errorf("%q: probability %q: want a number ≥ 0", s, m[4])
		case frames != 1:
			return nil, fmt.Errorf("%q: (%d, %d, %d): %d frames is a video, and only images (frames 1) are sent", s, h, w, frames, frames)
		case h < 1 || w < 1 || h > 8192 || w > 8192:
			return nil, fmt.Errorf("%q: (%d, %d, 1): sides go from 1 to 8192 pixels", s, h, w)
		}
		out = append(out, Bucket{Height: h, Width: w, P: p})
		sum += p
	}
	if sum <= 0 {
		return nil, fmt.Errorf("%q: the probabilities sum to 0: give one a positive weight", s)
	}
	for i := range out {
		out[i].P /= sum
	}
	return out, nil
}

// splitEntries splits a dict body on the commas between entries (not
// those inside a tuple).
func splitEntries(body string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range body {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, body[start:i])
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(body[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// check reports what is wrong with m.
func (m *MM) check() error {
	if m.Items < 1 {
		return fmt.Errorf("MM.Items = %d: a request carries at least 1 image", m.Items)
	}
	if len(m.Buckets) == 0 {
		return errors.New("MM.Buckets is empty: give at least one image size")
	}
	return nil
}

// imagePool holds each bucket's images, made on first use.
type imagePool struct {
	once []sync.Once
	urls [][]string
	seed uint64
}

func newImagePool(n int, seed uint64) *imagePool {
	return &imagePool{once: make([]sync.Once, n), urls: make([][]string, n), seed: seed}
}

// images are request i's image URLs: each item's bucket drawn from the
// seed and i, its image taken in turn from the bucket's pool.
func (m *MM) images(pool *imagePool, seed uint64, i int) []string {
	r := mrand.New(mrand.NewPCG(seed^0x6d6d, uint64(i)))
	out := make([]string, m.Items)
	for k := range out {
		b := m.pick(r.Float64())
		pool.once[b].Do(func() { pool.urls[b] = randomJPEGs(m.Buckets[b], pool.seed+uint64(b)) })
		out[k] = pool.urls[b][(i*m.Items+k)%imagesPerBucket]
	}
	return out
}

// pick is the bucket that u in [0, 1) falls in.
func (m *MM) pick(u float64) int {
	for i, b := range m.Buckets {
		if u < b.P {
			return i
		}
		u -= b.P
	}
	return len(m.Buckets) - 1
}

// randomJPEGs makes imagesPerBucket images of random pixels of b's size,
// as data: URLs of base64 JPEGs.
func randomJPEGs(b Bucket, seed uint64) []string {
	r := mrand.New(mrand.NewPCG(seed, 0x6a706567)) // "jpeg"
	out := make([]string, imagesPerBucket)
	for k := range out {
		img := image.NewRGBA(image.Rect(0, 0, b.Width, b.Height))
		for y := 0; y < b.Height; y++ {
			for x := 0; x < b.Width; x++ {
				v := r.Uint32()
				img.SetRGBA(x, y, color.RGBA{R: uint8(v), G: uint8(v >> 8), B: uint8(v >> 16), A: 255})
			}
		}
		var buf bytes.Buffer
		_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 75}) // writing to a buffer cannot fail
		out[k] = "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	return out
}
