package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// podPatchMeta is the strategic merge patch schema of a pod, read from its Go type once.
var podPatchMeta = func() strategicpatch.LookupPatchMeta {
	meta, err := strategicpatch.NewPatchMetaFromStruct(v1.Pod{})
	if err != nil {
		panic(fmt.Sprintf("status: the pod's patch schema: %v", err))
	}
	return meta
}()

// statusPatch is the strategic merge patch that turns old into next, carrying the pod UID so that
// the API refuses it for a pod re-created under the same name. unchanged is true when the patch
// would change nothing but the UID. The kubelet's statusutil.PatchPodStatus.
//
// The kubelet encodes both pods to JSON and hands the bytes to CreateTwoWayMergePatch, which
// decodes them into maps again to compare them. Here the maps are built straight from the
// statuses (statusMaps: the JSON decoding's maps, with the same keys, the same omitted fields,
// int64 for every integer, times and quantities as their text), and only the patch is encoded.
// The one thing the text changes that the maps would keep is a string that is not valid UTF-8
// (the encoder replaces each bad byte with U+FFFD, so two such strings can compare equal as text
// and not as Go strings): a status with one goes the kubelet's way (statusPatchJSON).
// TestStatusPatchAsTheKubelet, TestStatusPatchRandomStatuses (every field of the status type,
// filled at random, numbers often zero) and FuzzStatusPatch hold the two to the same bytes;
// TestStatusMapsCoverPodStatus fails when a k8s.io/api release changes the status types' fields.
//
// Most of a write's status is what the API already has: the maps leave that out. A field of the
// status that is the same Go value on both sides is left out of both (withoutEqualFields), and a
// condition that is the same on both sides, its type once in each list, is only its type
// (sameConditions). A strategic merge patch of two maps is a patch per key, each from the two
// sides' values alone, and two equal values give none; a list merged by key patches each element
// from the two sides' elements alone, and lists every element's key in $setElementOrder, so an
// element equal on both sides needs no more than its key. A list of container statuses that
// surely changed (containersDiffer) is left out of the old side's maps. The patch's bytes are the ones the
// whole maps give: TestStatusPatchAsTheWholeMaps holds the two to them.
func statusPatch(uid types.UID, old, next v1.PodStatus) (patch []byte, unchanged bool, err error) {
	withoutEqualFields(&old, &next)
	var m statusMaps
	m.sameOld, m.sameNext = sameConditions(old.Conditions, next.Conditions)
	// A list of container statuses is replaced whole when it changed at all: the old one's
	// content matters only to tell whether it did, and a list sure to differ is an empty one
	// on the old side, there so that the next side's having none still removes it.
	built := old
	stale := [3]*[]v1.ContainerStatus{&built.InitContainerStatuses, &built.ContainerStatuses, &built.EphemeralContainerStatuses}
	news := [3][]v1.ContainerStatus{next.InitContainerStatuses, next.ContainerStatuses, next.EphemeralContainerStatuses}
	var replaced [3]bool
	for i, l := range stale {
		if len(*l) > 0 && containersDiffer(*l, news[i]) {
			*l, replaced[i] = nil, true
		}
	}
	oldMap := m.pod("", &built, m.sameOld)
	for i, key := range [3]string{"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"} {
		if replaced[i] {
			oldMap["status"].(obj)[key] = []any{}
		}
	}
	newMap := m.pod(uid, &next, m.sameNext)
	if m.bad {
		// The statuses without what they share: left out of both, it is left out of the
		// patch through the JSON text as well.
		return statusPatchJSON(uid, old, next)
	}
	patchMap, err := strategicpatch.CreateTwoWayMergeMapPatchUsingLookupPatchMeta(oldMap, newMap, podPatchMeta)
	if err != nil {
		return nil, false, err
	}
	buf := patchBuffers.Get().(*[]byte)
	defer patchBuffers.Put(buf)
	if *buf, err = appendJSON((*buf)[:0], map[string]any(patchMap)); err != nil {
		return nil, false, err
	}
	// The patch is copied out of the reused buffer at its length: the request's body may be
	// read after the answer (RoundTripper's contract does not say), so it is the caller's.
	patch = bytes.Clone(*buf)
	return patch, onlyUID(patch, uid), nil
}

// patchBuffers are the buffers statusPatch encodes its patch into before copying it at its
// length: a patch grown from a fresh buffer each time (a first status's is over 1 KB) cost
// the copies of its growth besides itself. Status writes of many nodes run at once in `run`,
// hence a pool rather than one buffer.
var patchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// statusPatchJSON is statusPatch the kubelet's way, through the JSON text of both pods.
func statusPatchJSON(uid types.UID, old, next v1.PodStatus) (patch []byte, unchanged bool, err error) {
	oldData, err := json.Marshal(v1.Pod{Status: old})
	if err != nil {
		return nil, false, err
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: next})
	if err != nil {
		return nil, false, err
	}
	patch, err = strategicpatch.CreateTwoWayMergePatchUsingLookupPatchMeta(oldData, newData, podPatchMeta)
	if err != nil {
		return nil, false, err
	}
	return patch, onlyUID(patch, uid), nil
}

// onlyUID reports whether patch changes nothing but the pod's UID.
func onlyUID(patch []byte, uid types.UID) bool {
	return bytes.Equal(patch, fmt.Appendf(nil, `{"metadata":{"uid":%q}}`, uid))
}

// appendJSON appends v, a value of a patch map, as encoding/json.Marshal writes it: object keys
// in sorted order, strings with its escapes. The patch holds only objects (plain maps: the caller
// hands the top one, a strategicpatch.JSONMap, as one), lists, strings, integers, booleans and
// nulls; a string that needs escaping, or any other type, is written by encoding/json itself.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case string:
		return appendJSONString(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSONString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendJSON(b, v[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, data...), nil
}

// appendJSONString appends s quoted. Printable ASCII other than the quote, the backslash and
// the three characters encoding/json escapes for HTML, and valid UTF-8 other than U+2028 and
// U+2029, is written as it is; anything else by encoding/json.
func appendJSONString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c == 0x7f {
				return appendMarshaled(b, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return appendMarshaled(b, s)
		}
		i += size
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

func appendMarshaled(b []byte, s string) ([]byte, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return append(b, data...), nil
}
