package workload

// words is the fixed vocabulary synthetic prompts are drawn from: 256 common,
// short, lowercase English words, each of which the tokenizers of current
// served models (cl100k-derived vocabularies such as Qwen2/Qwen3's and
// Llama 3's) encode as exactly one token when preceded by a space, and which
// vLLM's simulator counts as one token (one per whitespace-separated word).
// The list is part of the benchmark's definition: changing it changes every
// prompt, so keep it fixed (TestWordsFixed guards it) and exactly 256 long,
// so that one word encodes one byte of a nonce or request index.
var words = [256]string{
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as",
	"was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
	"his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
	"were", "their", "one", "all", "we", "can", "her", "has", "there", "been",
	"if", "more", "when", "will", "would", "who", "so", "no", "she", "other",
	"its", "may", "these", "what", "them", "than", "some", "him", "time", "into",
	"only", "do", "out", "up", "also", "my", "any", "like", "our", "new",
	"about", "first", "very", "two", "how", "many", "me", "then", "your", "people",
	"now", "such", "most", "made", "over", "after", "make", "well", "back", "way",
	"just", "year", "work", "good", "much", "where", "day", "know", "take", "should",
	"see", "each", "used", "long", "get", "here", "life", "world", "could", "part",
	"being", "still", "great", "own", "old", "come", "home", "place", "through", "both",
	"under", "last", "never", "same", "water", "number", "night", "city", "down", "even",
	"right", "small", "three", "state", "name", "high", "school", "might", "book", "end",
	"house", "few", "another", "since", "every", "found", "man", "going", "thing", "help",
	"side", "hand", "power", "left", "open", "love", "black", "white", "early", "game",
	"line", "look", "music", "family", "young", "play", "system", "king", "road", "group",
	"story", "heart", "light", "team", "body", "face", "door", "food", "room", "area",
	"money", "point", "week", "month", "friend", "change", "order", "field", "paper", "land",
	"case", "idea", "party", "level", "plan", "price", "river", "table", "town", "voice",
	"word", "art", "war", "air", "car", "sun", "sea", "tree", "fire", "rain",
	"blue", "green", "red", "gold", "stone", "glass", "wood", "street", "park", "train",
	"ship", "bird", "horse", "dog", "cat", "fish", "milk", "bread", "salt", "sugar",
	"snow", "wind", "star", "moon", "hill", "lake", "farm", "cup", "garden", "window",
	"chair", "box", "bag", "key", "ball", "coat", "shoe", "hat", "ring", "bell",
	"song", "dance", "film", "page", "letter", "map",
}

// Vocabulary returns the fixed word list prompts are made of (a copy).
func Vocabulary() []string { return append([]string(nil), words[:]...) }

// InVocabulary reports whether w is one of the list's words, whose token
// count is known (one each).
func InVocabulary(w string) bool {
	_, ok := vocabIndex[w]
	return ok
}

var vocabIndex = func() map[string]int {
	m := make(map[string]int, len(words))
	for i, w := range words {
		m[w] = i
	}
	return m
}()
