package check

import "github.com/vllmperf/vllmperf/internal/target/serverfamily"

// capFlag names the flag that caps the batch in the server's family
// (vLLM's max-num-seqs), for messages: the family the run's snapshot was
// read with, else the default.
func (c *checker) capFlag() string {
	fam := serverfamily.Default
	if c.res.After != nil {
		fam = c.res.After.Family()
	}
	return fam.Flags.BatchCap
}
