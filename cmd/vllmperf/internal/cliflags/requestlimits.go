package cliflags

import "fmt"

// MaxTokensFlag bounds --prompt-tokens, --shared-prefix-tokens and
// --max-tokens: four times the longest context any model served by vLLM
// takes today (Llama 4 Scout's 10M is the outlier; most stop at 1M), so
// that an absurd value is refused before a prompt of it is built.
const MaxTokensFlag = 1 << 22

// checkTokenFlags refuses a token count above MaxTokensFlag, naming the
// flag.
func (o *RequestFlags) checkTokenFlags() error {
	for _, f := range []struct {
		name string
		n    int
	}{{"--prompt-tokens", o.PromptTokens}, {"--shared-prefix-tokens", o.SharedPrefixTokens}, {"--max-tokens", o.MaxTokens}} {
		if f.n > MaxTokensFlag {
			return fmt.Errorf("%s %d: at most %d tokens; no server takes a request that long", f.name, f.n, MaxTokensFlag)
		}
	}
	return nil
}
