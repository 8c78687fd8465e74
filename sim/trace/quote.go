package trace

import (
	"fmt"
	"unicode/utf8"
)

// MaxQuote caps how much of outside input one trace field quotes: a manifest's decode error, a
// plugin's name. Input that a file or a plugin server controls is unbounded, and quoted whole it
// would make trace and log lines of its size at every retry.
const MaxQuote = 1024

// Quote returns s cut to MaxQuote bytes, saying how much was left out. The cut falls on a rune
// boundary. It is the one cap every component applies to what it quotes from outside input.
func Quote(s string) string {
	if len(s) <= MaxQuote {
		return s
	}
	cut := MaxQuote
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d more bytes)", s[:cut], len(s)-cut)
}
