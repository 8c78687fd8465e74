package fakeapiserver_test

import (
	"bufio"
	"net/http"
	"regexp"
	"testing"
	"time"

	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestJSONBookmarkBytes pins a JSON watch's BOOKMARK lines to kube-apiserver's: the object is
// the resource's empty typed object (the cacher's newFunc) with only its resourceVersion set,
// and the initial-events-end annotation on the bookmark that ends a watch-list's initial
// events, encoded as the JSON serializer encodes any object: kind and apiVersion first, then
// metadata, then the kind's fields that are never omitted (a pod's spec.containers, null, and
// its empty status).
func TestJSONBookmarkBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(t, fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: testOptions().Tracer})
		l, _ := serve(t, srv)
		c := l.dial(t, "GET /api/v1/namespaces/default/pods?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=90 HTTP/1.1\r\nHost: fake\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		var got []string
		start := time.Now()
		for len(got) < 2 && sc.Scan() {
			got = append(got, sc.Text())
		}
		if time.Since(start) < time.Minute {
			t.Errorf("the periodic bookmark came after %v, want a minute", time.Since(start))
		}
		// The resource version is the store's; the rest is fixed.
		rv := regexp.MustCompile(`"resourceVersion":"[0-9]+"`)
		for i := range got {
			got[i] = rv.ReplaceAllString(got[i], `"resourceVersion":"RV"`)
		}
		want := []string{
			`{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"RV","annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},"status":{}}}`,
			`{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"RV"},"spec":{"containers":null},"status":{}}}`,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("BOOKMARK lines (-want +got):\n%s", diff)
		}
		_ = resp.Body.Close()
	})
}
