package workload

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/request/dataset"
	"github.com/vllmperf/vllmperf/internal/request/openai"
)

// Class is one kind of request in a Mix: a Config (its Model is the Mix's)
// or a multi-turn Chat, sent in proportion to Weight.
type Class struct {
	// Name labels the class in results ("short", "long").
	Name string
	// Weight is the class's share of requests relative to the others (≥ 1).
	Weight int
	// Config describes the class's prompts. Model, Seed and Nonce are the
	// Mix's; its other zero fields take their defaults.
	Config Config
	// Chat, when set, makes the class a set of multi-turn conversations;
	// Config then gives only Endpoint, MaxTokens, MinTokens, IgnoreEOS and
	// Temperature.
	Chat *Chat
	// Dataset, when set, makes the class send a data set's entries (see
	// datasetGen); each entry's output length is its max_tokens, capped by
	// Config.MaxTokens when that is set. Config then gives only Endpoint,
	// MaxTokens, MinTokens, IgnoreEOS and Temperature.
	Dataset *dataset.Set
}

// Mix interleaves several classes of requests deterministically: over each
// period of Σweights indices, class k takes Weight(k) consecutive slots, in
// the order given. Next(i) is a pure function of i, safe for concurrent
// use, and the request of every class starts with the run's nonce.
type Mix struct {
	classes []mixClass
	period  int
	nonce   uint64
}

type mixClass struct {
	name   string
	weight int
	start  int // first slot of the class in a period
	gen    *Generator
	chat   *chatGen
	data   *datasetGen
}

// NewMix builds a Mix for model. nonce 0 draws one (see Nonce); all
// classes share it, so a shared system prompt is shared across them.
func NewMix(model string, seed, nonce uint64, classes []Class) (*Mix, error) {
	if len(classes) == 0 {
		return nil, errors.New("workload: a mix needs at least one class")
	}
	m := &Mix{nonce: nonce}
	var errs []error
	seen := map[string]bool{}
	for k, c := range classes {
		if c.Weight < 1 {
			errs = append(errs, fmt.Errorf("class %q: Weight = %d: must be at least 1", c.Name, c.Weight))
		}
		if seen[c.Name] {
			errs = append(errs, fmt.Errorf("class %q appears twice: give each class its own name", c.Name))
		}
		seen[c.Name] = true
		cfg := c.Config
		cfg.Model, cfg.Seed, cfg.Nonce = model, seed+uint64(k), m.nonce
		if c.Chat != nil && c.Dataset != nil {
			errs = append(errs, fmt.Errorf("class %q: Chat and Dataset exclude each other", c.Name))
			continue
		}
		if c.Chat != nil || c.Dataset != nil {
			cfg.PromptTokens, cfg.Body = UniqueWords, "" // the chat or the data set makes the prompts
		}
		g, err := New(cfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("class %q: %w", c.Name, err))
			continue
		}
		m.nonce = g.Nonce() // the first class draws it when 0; the others reuse it
		mc := mixClass{name: c.Name, weight: c.Weight, start: m.period, gen: g}
		if c.Chat != nil {
			if mc.chat, err = newChatGen(g, *c.Chat); err != nil {
				errs = append(errs, fmt.Errorf("class %q: %w", c.Name, err))
			}
		}
		if c.Dataset != nil {
			if mc.data, err = newDatasetGen(g, c.Dataset, c.Config.MaxTokens); err != nil {
				errs = append(errs, fmt.Errorf("class %q: %w", c.Name, err))
			}
		}
		if c.Chat != nil && c.Chat.Live && len(classes) > 1 {
			errs = append(errs, fmt.Errorf("class %q: a live chat is its point's only class (request i is turn i mod its turns): use points: each-class", c.Name))
		}
		m.classes = append(m.classes, mc)
		m.period += max(c.Weight, 0)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	return m, nil
}

// Nonce returns the run's nonce.
func (m *Mix) Nonce() uint64 { return m.nonce }

// locate returns request i's class and its index within that class.
func (m *Mix) locate(i int) (*mixClass, int) {
	if i < 0 {
		i = -i
	}
	cycle, slot := i/m.period, i%m.period
	for k := range m.classes {
		c := &m.classes[k]
		if slot < c.start+c.weight {
			return c, cycle*c.weight + slot - c.start
		}
	}
	panic("unreachable: slot beyond the period")
}

// Next returns request i.
func (m *Mix) Next(i int) openai.Request {
	c, j := m.locate(i)
	switch {
	case c.chat != nil:
		return c.chat.next(j)
	case c.data != nil:
		return c.data.next(j)
	}
	return c.gen.Next(i)
}

// ClassOf names request i's class.
func (m *Mix) ClassOf(i int) string {
	c, _ := m.locate(i)
	return c.name
}

// Classes names the classes in order.
func (m *Mix) Classes() []string {
	out := make([]string, len(m.classes))
	for k, c := range m.classes {
		out[k] = c.name
	}
	return out
}

// Turns is how many turns the mix's live conversations have: what
// load.Config.Turns must be (1 when it has none). A live chat must be the
// mix's only class, so that request i is turn i mod Turns.
func (m *Mix) Turns() int {
	if len(m.classes) == 1 && m.classes[0].chat != nil && m.classes[0].chat.chat.Live {
		return len(m.classes[0].chat.chat.Turns)
	}
	return 1
}

// Declared is class name's declared prompt length in tokens (its own
// prompt and the shared system prompt) when the class draws random words;
// 0 for fixed text, chats and data sets, whose lengths are their text's.
func (m *Mix) Declared(name string) int {
	for _, c := range m.classes {
		cfg := c.gen.cfg
		if c.name == name && c.chat == nil && c.data == nil && cfg.Body == "" && cfg.SystemText == "" {
			return cfg.PromptTokens + cfg.SharedPrefixTokens
		}
	}
	return 0
}

// Chat describes multi-turn conversations that share a system prompt: the
// prefix-caching workload of chat assistants.
type Chat struct {
	// System is the system prompt's text (after the run's nonce), the same
	// for every conversation of the run.
	System string
	// Turns are the conversation's exchanges; the assistant replies are
	// fixed text, so the history each turn resends is known exactly.
	Turns []openai.Turn
	// Conversations is how many conversations run side by side (≥ 1).
	// Request j of the class is turn (j / Conversations) mod len(Turns) of
	// conversation j mod Conversations, so a conversation's next turn comes
	// Conversations requests after its previous one.
	Conversations int
	// Live makes the conversations a client's: request j is turn j mod
	// len(Turns) of conversation j / len(Turns), every conversation its
	// own, and the requests keep their text so that the load generator
	// (load.Config.Turns = len(Turns)) puts the server's replies in place
	// of the fixed assistant texts. Conversations is then unused.
	Live bool
}

// chatGen builds the requests of a Chat class.
type chatGen struct {
	gen    *Generator
	chat   Chat
	system string
}

func newChatGen(g *Generator, c Chat) (*chatGen, error) {
	var errs []error
	if c.Conversations < 1 && !c.Live {
		errs = append(errs, fmt.Errorf("Chat.Conversations = %d: must be at least 1", c.Conversations))
	}
	if len(c.Turns) == 0 {
		errs = append(errs, errors.New("Chat.Turns is empty: give at least one exchange"))
	}
	for k, t := range c.Turns {
		if strings.TrimSpace(t.User) == "" || strings.TrimSpace(t.Assistant) == "" {
			errs = append(errs, fmt.Errorf("Chat.Turns[%d]: user and assistant text must both be set", k))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var sb strings.Builder
	g.appendBytes(&sb, g.nonce, NonceWords)
	g.appendText(&sb, c.System)
	return &chatGen{gen: g, chat: c, system: sb.String()}, nil
}

// next builds the class's j-th request.
func (c *chatGen) next(j int) openai.Request {
	var conv, turn int
	if c.chat.Live {
		conv, turn = j/len(c.chat.Turns), j%len(c.chat.Turns)
	} else {
		conv, turn = j%c.chat.Conversations, (j/c.chat.Conversations)%len(c.chat.Turns)
	}
	// The first user message starts with the conversation's number, so
	// conversations share the system prompt and nothing after it.
	var tag strings.Builder
	c.gen.appendBytes(&tag, uint64(conv), IndexWords)
	history := make([]openai.Turn, turn)
	for k := range turn {
		history[k] = openai.Turn{User: c.chat.Turns[k].User, Assistant: c.chat.Turns[k].Assistant}
	}
	prompt := c.chat.Turns[turn].User
	if turn == 0 {
		prompt = tag.String() + " " + prompt
	} else {
		history[0].User = tag.String() + " " + history[0].User
	}
	req := c.gen.request(prompt)
	req.System = c.system
	req.History = history
	req.KeepText = c.chat.Live
	return req
}

// Longest is the request of a Mix that needs the most context.
type Longest struct {
	// Class names the request's class.
	Class string
	// PromptWords counts the words of every message the request sends
	// (system, history, prompt): its prompt tokens on the suite's prompts,
	// one token a word, before a chat template's few.
	PromptWords int
	// MaxTokens is the request's max_tokens.
	MaxTokens int
}

// Tokens is what the server's context must hold for the request.
func (l Longest) Tokens() int { return l.PromptWords + l.MaxTokens }

// Longest returns the request of the mix that needs the most context: for
// a chat class its last turn, which resends the whole conversation.
func (m *Mix) Longest() Longest {
	var best Longest
	for _, c := range m.classes {
		req := c.gen.Next(0)
		switch {
		case c.chat != nil && c.chat.chat.Live:
			req = c.chat.next(len(c.chat.chat.Turns) - 1)
		case c.chat != nil:
			req = c.chat.next(c.chat.chat.Conversations * (len(c.chat.chat.Turns) - 1))
		case c.data != nil:
			req = c.data.longest()
		}
		l := Longest{Class: c.name, PromptWords: requestWords(req), MaxTokens: req.MaxTokens}
		if l.Tokens() > best.Tokens() {
			best = l
		}
	}
	return best
}

// requestWords counts the words of every message of req.
func requestWords(req openai.Request) int {
	n := len(strings.Fields(req.System)) + len(strings.Fields(req.Prompt))
	for _, t := range req.History {
		n += len(strings.Fields(t.User)) + len(strings.Fields(t.Assistant))
	}
	return n
}
