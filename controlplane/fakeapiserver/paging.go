package fakeapiserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// Lists are paged as kube-apiserver pages them: a list with limit returns at most that many
// items and, when more may follow, a continue token. The token is the real one's format, base64
// (URL alphabet, unpadded) of {"v":"meta.k8s.io/v1","rv":N,"start":"<key after the last item>"},
// and the next page is read at resource version N, so the pages of one list are one consistent
// snapshot even while objects change. The store keeps only the latest objects, so a snapshot
// is rebuilt by undoing the resource's newer writes from its watch history; once the history
// no longer reaches back to N, the next page is 410 Gone with the inconsistent-continue token
// etcd's compaction gives, whose rv -1 continues at the latest version.

// continueToken is kube-apiserver's continue token (k8s.io/apiserver/pkg/storage).
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// Errors of a continue token, with kube-apiserver's messages.
var (
	errInvalidStartRV     = errors.New("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	errEmptyStartKey      = errors.New("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
	errGenericInvalidKey  = errors.New("continue key is not valid")
	errUnrecognizedFormat = errors.New("continue key is not valid: server does not recognize this encoded version")
)

// The 410 messages of a list whose version is compacted, from kube-apiserver's etcd3 store.
const (
	listExpired          = "The resourceVersion for the provided list is too old."
	inconsistentContinue = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided " +
		"token results in an inconsistent list - objects that were created, " +
		"modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
)

func decodeContinue(value string) (start string, rv int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, err)
	}
	if c.APIVersion != "meta.k8s.io/v1" {
		return "", 0, fmt.Errorf("%w %v", errUnrecognizedFormat, c.APIVersion)
	}
	if c.ResourceVersion == 0 {
		return "", 0, errInvalidStartRV
	}
	if c.StartKey == "" {
		return "", 0, errEmptyStartKey
	}
	// A key that climbs out of the listed prefix is refused, as the real server refuses it.
	key := c.StartKey
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if path.Clean(key) != key {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, c.StartKey)
	}
	return key[1:], c.ResourceVersion, nil
}

func encodeContinue(start string, rv int64) string {
	out, _ := json.Marshal(&continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rv, StartKey: start})
	return base64.RawURLEncoding.EncodeToString(out)
}

// listKey is an object's key relative to what the list covers, as a continue token carries it:
// namespace/name across namespaces, the name within one or for cluster-scoped objects.
func listKey(t target, e *entry) string {
	m := e.meta()
	if t.res.namespaced && t.namespace == "" {
		return m.GetNamespace() + "/" + m.GetName()
	}
	return m.GetName()
}

// invalidListOptions is how kube-apiserver answers list options that fail validation.
func invalidListOptions(errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
}

// defaultWatchList is SetListOptionsDefaults with the WatchList feature on, as it is by default
// since v1.32: a watch that gives neither sendInitialEvents nor resourceVersionMatch, from no
// resource version or "0", is a watch-list that starts with the initial events.
func defaultWatchList(opts *listOptions) {
	if opts.sendInitialEvents != nil || opts.rvMatch != "" {
		return
	}
	if opts.resourceVersion == "" || opts.resourceVersion == "0" {
		opts.sendInitialEvents = new(bool)
		*opts.sendInitialEvents = true
		opts.rvMatch = metav1.ResourceVersionMatchNotOlderThan
	}
}

// validateListOptions is kube-apiserver's ValidateListOptions with the WatchList feature on.
func validateListOptions(opts listOptions, isWatch bool) error {
	var errs field.ErrorList
	matchPath := field.NewPath("resourceVersionMatch")
	match := opts.rvMatch
	if isWatch {
		if opts.sendInitialEvents != nil && match != metav1.ResourceVersionMatchNotOlderThan {
			errs = append(errs, field.Forbidden(matchPath, fmt.Sprintf("sendInitialEvents requires setting resourceVersionMatch to %s", metav1.ResourceVersionMatchNotOlderThan)))
		}
		if match != "" {
			if opts.sendInitialEvents == nil {
				errs = append(errs, field.Forbidden(matchPath, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
			}
			if match != metav1.ResourceVersionMatchNotOlderThan {
				errs = append(errs, field.NotSupported(matchPath, match, []string{string(metav1.ResourceVersionMatchNotOlderThan)}))
			}
			if opts.continueToken != "" {
				errs = append(errs, field.Forbidden(matchPath, "resourceVersionMatch is forbidden when continue is provided"))
			}
		}
	} else {
		if match != "" {
			if opts.resourceVersion == "" {
				errs = append(errs, field.Forbidden(matchPath, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
			}
			if opts.continueToken != "" {
				errs = append(errs, field.Forbidden(matchPath, "resourceVersionMatch is forbidden when continue is provided"))
			}
			if match != metav1.ResourceVersionMatchExact && match != metav1.ResourceVersionMatchNotOlderThan {
				errs = append(errs, field.NotSupported(matchPath, match, []string{string(metav1.ResourceVersionMatchExact), string(metav1.ResourceVersionMatchNotOlderThan), ""}))
			}
			if match == metav1.ResourceVersionMatchExact && opts.resourceVersion == "0" {
				errs = append(errs, field.Forbidden(matchPath, "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))
			}
		}
		if opts.sendInitialEvents != nil {
			errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
		}
	}
	if len(errs) > 0 {
		return invalidListOptions(errs)
	}
	return nil
}

// listPage is one page of a list.
type listPage struct {
	items     []*entry
	rv        uint64 // the list's resourceVersion
	cont      string
	remaining *int64
}

// listPage reads the page opts ask for. The caller holds the store lock.
func (s *Server) listPage(t target, opts listOptions) (listPage, error) {
	st := s.store
	current := st.rv
	var start string
	var at uint64 // 0: the latest state
	if opts.continueToken != "" {
		if opts.resourceVersion != "" && opts.resourceVersion != "0" {
			return listPage{}, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		key, rv, err := decodeContinue(opts.continueToken)
		if err != nil {
			return listPage{}, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		start = key
		if rv > 0 {
			at = uint64(rv)
		}
		if at > current {
			// A token from the future: kube-apiserver's watch cache waits for that version
			// and gives up with its Too large resource version timeout.
			return listPage{}, tooLargeRV(at, current)
		}
	} else if opts.resourceVersion != "" && opts.resourceVersion != "0" {
		want, _ := strconv.ParseUint(opts.resourceVersion, 10, 64)
		exact := opts.rvMatch == metav1.ResourceVersionMatchExact || (opts.rvMatch == "" && opts.limit > 0)
		switch {
		case want > current:
			return listPage{}, tooLargeRV(want, current)
		case exact:
			at = want
		}
	}
	all := st.list(t.res, t.namespace)
	if at > 0 && at < current {
		var ok bool
		if all, ok = st.snapshot(t, at); !ok {
			if opts.continueToken != "" {
				err := apierrors.NewResourceExpired(inconsistentContinue)
				err.ErrStatus.ListMeta.Continue = encodeContinue(start, -1)
				return listPage{}, err
			}
			return listPage{}, apierrors.NewResourceExpired(listExpired)
		}
	}
	page := listPage{rv: current}
	if at > 0 {
		page.rv = at
	}
	if start != "" {
		i := sort.Search(len(all), func(i int) bool { return listKey(t, all[i]) >= start })
		all = all[i:]
	}
	for i, e := range all {
		if !opts.matches(t.res, e) {
			continue
		}
		page.items = append(page.items, e)
		if opts.limit > 0 && int64(len(page.items)) == opts.limit && i+1 < len(all) {
			page.cont = encodeContinue(listKey(t, e)+"\x00", int64(page.rv))
			if opts.labels.Empty() && opts.fields.Empty() {
				n := int64(len(all) - i - 1)
				page.remaining = &n
			}
			break
		}
	}
	return page, nil
}

// snapshot returns the objects of t's list as they were at resource version rv, in key order, by
// undoing the newer writes recorded in the resource's watch history; false when the history no
// longer reaches back to rv. The caller holds the store lock.
func (st *store) snapshot(t target, rv uint64) ([]*entry, bool) {
	b := st.buckets[t.res.name]
	if rv < b.compacted {
		return nil, false
	}
	objects := make(map[string]*entry, len(b.objects))
	for k, e := range b.objects {
		objects[k] = e
	}
	for i := len(b.history) - 1; i >= 0 && b.history[i].rv > rv; i-- {
		ev := b.history[i]
		m := ev.cur.meta()
		key := objectKey(m.GetNamespace(), m.GetName())
		if ev.typ == watch.Added || ev.prev == nil {
			delete(objects, key)
		} else {
			objects[key] = ev.prev
		}
	}
	keys := make([]string, 0, len(objects))
	for k, e := range objects {
		if t.namespace == "" || e.meta().GetNamespace() == t.namespace {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]*entry, len(keys))
	for i, k := range keys {
		out[i] = objects[k]
	}
	return out, true
}
