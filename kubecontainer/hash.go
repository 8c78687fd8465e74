package kubecontainer

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"
)

// HashContainer is the kubelet's container hash (pkg/kubelet/container HashContainer): FNV-32a
// over the hash dump of the JSON of the container's name and image, and nothing else. The
// kubelet stores it on the runtime container when it creates it and compares it with the spec's
// at every sync; a running container whose hash differs was given a new image and is restarted.
// Resources, env, probes and lifecycle are left out on purpose: v1.35 restarts a container only
// for what a pod update may change and a running container cannot take in place.
//
// The kubelet marshals map{"name","image"} to JSON and hashes spew's dump of those bytes
// (hashutil.DeepHashObject with dump.ForHash): "([]uint8)[" then each byte in decimal, separated
// by spaces, then "]". The fake runtime hashes every container at every sync, and doing that
// through encoding/json and spew cost about a hundred allocations a container; this feeds the
// same bytes to FNV-32a as it goes, without building them, and gives the same value
// (TestHashContainerMatchesDump and its fuzz test check it against the kubelet's way).
func HashContainer(c *v1.Container) uint64 {
	h := fnvDump{sum: fnvOffset32}
	h.writeString("([]uint8)[")
	// A map marshals with sorted keys, so the JSON is {"image":...,"name":...}.
	h.jsonByte('{')
	h.jsonString(`"image":`)
	h.jsonValue(c.Image)
	h.jsonString(`,"name":`)
	h.jsonValue(c.Name)
	h.jsonByte('}')
	h.writeString("]")
	return uint64(h.sum)
}

// FNV-32a's parameters (hash/fnv).
const (
	fnvOffset32 = 2166136261
	fnvPrime32  = 16777619
)

// fnvDump is FNV-32a over the hash dump of a JSON document written to it a piece at a time.
type fnvDump struct {
	sum uint32
	// started is whether a JSON byte was dumped already: the dump separates bytes with spaces.
	started bool
}

// writeString feeds s itself to the hash.
func (h *fnvDump) writeString(s string) {
	for i := 0; i < len(s); i++ {
		h.add(s[i])
	}
}

// jsonByte feeds the dump of one JSON byte: a separating space after the first, then the byte in
// decimal.
func (h *fnvDump) jsonByte(b byte) {
	if h.started {
		h.add(' ')
	}
	h.started = true
	if b >= 100 {
		h.add('0' + b/100)
	}
	if b >= 10 {
		h.add('0' + b/10%10)
	}
	h.add('0' + b%10)
}

// add feeds one byte to the hash.
func (h *fnvDump) add(b byte) {
	h.sum ^= uint32(b)
	h.sum *= fnvPrime32
}

// jsonString feeds the dump of JSON text written as is.
func (h *fnvDump) jsonString(s string) {
	for i := 0; i < len(s); i++ {
		h.jsonByte(s[i])
	}
}

// jsonValue feeds the dump of s as encoding/json writes a string value. Printable ASCII other than
// the characters encoding/json escapes is written as is between quotes, which is every name and
// nearly every image; anything else goes through encoding/json itself.
func (h *fnvDump) jsonValue(s string) {
	if plainJSON(s) {
		h.jsonByte('"')
		h.jsonString(s)
		h.jsonByte('"')
		return
	}
	b, _ := json.Marshal(s) // a string always marshals
	for _, c := range b {
		h.jsonByte(c)
	}
}

// plainJSON is whether encoding/json writes s unchanged between quotes: printable ASCII without
// the quote, the backslash and the HTML characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
