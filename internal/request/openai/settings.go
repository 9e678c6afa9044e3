package openai

// DefaultAPIKeyEnv is the variable the API key is read from when no other
// is named, as vLLM's benchmark clients do.
const DefaultAPIKeyEnv = "OPENAI_API_KEY"

// Settings are a client's checked settings: the API, the largest
// stream line accepted, and the API key.
type Settings struct {
	Endpoint     Endpoint
	MaxEventSize int
	APIKey       string
}
