// Package tokenizer is the simulator's word tokenizer: one token per
// white-space separated word, into a model's vocabulary, and the output
// words the engine's token ids render as.
package tokenizer
