package fakeapiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestUpdateOwnedRetries makes the stored object move between an update's read and its write
// (Options.afterTry runs a second writer's update there), on each path an update takes: updateOwned
// itself with the in-process client's again, Direct.UpdateLease, and PUT. An update without a
// resource version tries again on the newer object and is stored once, with what it asked: a
// dropped retry would answer an error or leave the other writer's holder; a retry applied twice
// would take two resource versions. An update that names the version it read gets a conflict,
// as kube-apiserver's precondition check on the newer object gives, and stores nothing. A try
// the store did not move under is the only one.
func TestUpdateOwnedRetries(t *testing.T) {
	ctx := context.Background()
	const ns, name = "kube-node-lease", "node-1"
	lease := func(holder, rv string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)}}
	}
	// Each path takes the subtest's t: a failure belongs to the subtest that made it.
	paths := map[string]func(t *testing.T, s *Server, l *coordinationv1.Lease) (holder string, agains int, err error){
		"updateOwned": func(t *testing.T, s *Server, l *coordinationv1.Lease) (string, int, error) {
			d := s.Direct("mine")
			in, err := wireObject(leasesTarget, l)
			if err != nil {
				return "", 0, err
			}
			agains := 0
			e, err := s.updateOwned(ctx, d.target(leasesTarget, ns, name, ""), in, false, func() (runtime.Object, error) {
				agains++
				return wireObject(leasesTarget, l)
			})
			if err != nil {
				return "", agains, err
			}
			return *e.obj.(*coordinationv1.Lease).Spec.HolderIdentity, agains, nil
		},
		"Direct.UpdateLease": func(t *testing.T, s *Server, l *coordinationv1.Lease) (string, int, error) {
			got, err := s.Direct("mine").UpdateLease(ctx, l)
			if err != nil {
				return "", -1, err
			}
			return *got.Spec.HolderIdentity, -1, nil
		},
		"PUT": func(t *testing.T, s *Server, l *coordinationv1.Lease) (string, int, error) {
			body, err := json.Marshal(l)
			if err != nil {
				return "", -1, err
			}
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/"+ns+"/leases/"+name, bytes.NewReader(body)))
			if w.Code == http.StatusConflict {
				return "", -1, apierrors.NewConflict(leasesTarget.groupResource(), name, nil)
			}
			if w.Code != http.StatusOK {
				t.Fatalf("PUT = %d %s", w.Code, w.Body)
			}
			var got coordinationv1.Lease
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				return "", -1, err
			}
			return *got.Spec.HolderIdentity, -1, nil
		},
	}
	tests := []struct {
		name     string
		moves    []int // the tries after which the other writer updates (a holder of its own each time: an update that changes nothing is not written)
		withRV   bool  // the update names the version it read
		tries    int
		agains   int // how often updateOwned made a retry's object
		conflict bool
		holder   string // stored at the end
		writes   int    // resource versions taken after the create, the other writer's included
	}{
		{name: "not moved", tries: 1, agains: 0, holder: "mine", writes: 1},
		{name: "moved once", moves: []int{0}, tries: 2, agains: 1, holder: "mine", writes: 2},
		{name: "moved twice", moves: []int{0, 1}, tries: 3, agains: 2, holder: "mine", writes: 3},
		{name: "moved under a resource version", moves: []int{0}, withRV: true, tries: 1, agains: 1, conflict: true, holder: "other-0", writes: 1},
	}
	for path, update := range paths {
		for _, tt := range tests {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				var (
					s     *Server
					tries []int
					other bool // the other writer's own update is under way
					done  bool // the update under test has answered
				)
				s, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, afterTry: func(try int) {
					if other || done {
						return
					}
					tries = append(tries, try)
					if slices.Contains(tt.moves, try) {
						other = true
						_, err := s.Direct("other").UpdateLease(ctx, lease("other-"+strconv.Itoa(try), ""))
						other = false
						if err != nil {
							t.Fatalf("the other writer's update: %v", err)
						}
					}
				}})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				created, err := s.Direct("creator").CreateLease(ctx, lease("first", ""))
				if err != nil {
					t.Fatal(err)
				}
				base, _ := strconv.Atoi(created.ResourceVersion)
				rv := ""
				if tt.withRV {
					rv = created.ResourceVersion
				}
				_, agains, err := update(t, s, lease("mine", rv))
				done = true
				if got := apierrors.IsConflict(err); got != tt.conflict || (err != nil && !got) {
					t.Fatalf("update = %v, want a conflict: %t", err, tt.conflict)
				}
				want := make([]int, tt.tries)
				for i := range want {
					want[i] = i
				}
				if diff := cmp.Diff(want, tries); diff != "" {
					t.Errorf("tries (-want +got):\n%s", diff)
				}
				if agains >= 0 && agains != tt.agains {
					t.Errorf("again made %d objects, want %d", agains, tt.agains)
				}
				stored, err := s.Direct("reader").GetLease(ctx, ns, name)
				if err != nil {
					t.Fatal(err)
				}
				if h := *stored.Spec.HolderIdentity; h != tt.holder {
					t.Errorf("stored holder = %s, want %s", h, tt.holder)
				}
				if got, _ := strconv.Atoi(stored.ResourceVersion); got-base != tt.writes {
					t.Errorf("stored resource version %d after %d: %d writes, want %d", got, base, got-base, tt.writes)
				}
			})
		}
	}
}
