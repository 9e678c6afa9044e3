//go:build !unix

package openai

// maxRSS is 0 where getrusage is not available.
func maxRSS() int64 { return 0 }
