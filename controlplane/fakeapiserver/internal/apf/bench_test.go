package apf_test

import (
	"context"
	"sync"
	"testing"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/apf"
)

// BenchmarkLockUncontended is what the store lock costs a request when nobody waits, as in a
// replay, beside a sync.Mutex's Lock and Unlock.
func BenchmarkLockUncontended(b *testing.B) {
	b.Run("apf", func(b *testing.B) {
		var l apf.Lock
		ctx := context.Background()
		c := apf.Class{Level: apf.System, Flow: apf.Flow{Schema: "system-nodes", Distinguisher: "system:node:n1"}}
		b.ReportAllocs()
		for b.Loop() {
			_ = l.Lock(ctx, c)
			l.Unlock()
		}
	})
	b.Run("sync.Mutex", func(b *testing.B) {
		var l sync.Mutex
		b.ReportAllocs()
		for b.Loop() {
			l.Lock()
			//lint:ignore SA2001 the empty critical section is what this benchmark compares
			l.Unlock()
		}
	})
}

// BenchmarkClassify is the classification of a node's pod status patch, the commonest request of
// a fleet's.
func BenchmarkClassify(b *testing.B) {
	r := apf.Request{User: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}, Verb: "patch",
		Resource: "pods", Subresource: "status", Namespace: "default"}
	b.ReportAllocs()
	for b.Loop() {
		apf.Classify(r)
	}
}
