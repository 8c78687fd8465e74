package fieldmanager

import (
	"fmt"
	"strings"
	"testing"
)

// TestDecodedSetsBound wants the cache of decoded field sets bounded by the bytes it keeps, not
// by its entries alone: many distinct sets of 4 KiB never hold more than maxDecodedSetsBytes of
// keys, and a set larger than maxDecodedSetBytes is answered but not kept.
func TestDecodedSetsBound(t *testing.T) {
	reset := func() {
		decodedSets.Clear()
		decodedSetBytes.Store(0)
	}
	reset()
	defer reset()
	keyBytes := func() (n, entries int) {
		decodedSets.Range(func(k, _ any) bool {
			n += len(k.(string))
			entries++
			return true
		})
		return n, entries
	}
	pad := strings.Repeat("a", 4<<10)
	most := 0
	for i := 0; i < 3*maxDecodedSetsBytes/len(pad); i++ {
		raw := []byte(fmt.Sprintf(`{"f:%s%d":{}}`, pad, i))
		if _, ok := decodedSet(raw); !ok {
			t.Fatalf("set %d: not decoded", i)
		}
		n, _ := keyBytes()
		most = max(most, n)
		if n > maxDecodedSetsBytes {
			t.Fatalf("after %d sets of %d bytes the cache keeps %d bytes of keys, want at most %d", i+1, len(raw), n, maxDecodedSetsBytes)
		}
	}
	if most < maxDecodedSetsBytes/2 {
		t.Errorf("the cache kept at most %d bytes, want it to fill to near its bound %d", most, maxDecodedSetsBytes)
	}

	big := []byte(fmt.Sprintf(`{"f:%s":{}}`, strings.Repeat("b", maxDecodedSetBytes)))
	if _, ok := decodedSet(big); !ok {
		t.Fatal("the large set: not decoded")
	}
	if _, kept := decodedSets.Load(string(big)); kept {
		t.Errorf("a set of %d bytes was kept, want sets over %d bytes not kept", len(big), maxDecodedSetBytes)
	}
	small := []byte(`{"f:spec":{"f:x":{}}}`)
	decodedSet(small)
	if _, kept := decodedSets.Load(string(small)); !kept {
		t.Errorf("a set of %d bytes was not kept", len(small))
	}
}
