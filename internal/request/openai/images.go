package openai

import goopenai "github.com/sashabaranov/go-openai"

// userMessage is the request's user turn: the prompt as text, or with
// Images a text part followed by an image_url part per image, as vllm
// bench serve's random-mm data set sends them.
func (r *Request) userMessage() goopenai.ChatCompletionMessage {
	if len(r.Images) == 0 {
		return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: r.Prompt}
	}
	parts := make([]goopenai.ChatMessagePart, 0, 1+len(r.Images))
	parts = append(parts, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: r.Prompt})
	for _, u := range r.Images {
		parts = append(parts, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeImageURL, ImageURL: &goopenai.ChatMessageImageURL{URL: u}})
	}
	return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, MultiContent: parts}
}
