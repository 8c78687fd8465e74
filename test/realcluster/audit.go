package realcluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Request is one API request of the audit log.
type Request struct {
	Received  time.Time
	User      string
	UserAgent string
	Verb      string // the API verb: get, list, watch, create, update, patch, delete, ...
	// Resource is the resource with its subresource, "pods/status"; a non-resource request is
	// its path.
	Resource string
	Code     int32
}

// RequestKey is what the tables count by.
type RequestKey struct{ Verb, Resource string }

// ReadAuditLog reads the audit log of kube-apiserver (JSON lines, one event per stage), and
// returns each request once, in the order of the log. A request is logged at ResponseComplete
// and, if it is long-running (a watch), at ResponseStarted first: the first line of an audit ID
// counts, so a watch still open at the end counts too.
func ReadAuditLog(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	seen := map[types.UID]int{}
	var reqs []Request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log %s, line %d: %w", path, line, err)
		}
		var code int32
		if ev.ResponseStatus != nil {
			code = ev.ResponseStatus.Code
		}
		if i, ok := seen[ev.AuditID]; ok {
			if code != 0 {
				reqs[i].Code = code
			}
			continue
		}
		r := Request{Received: ev.RequestReceivedTimestamp.Time, User: ev.User.Username, UserAgent: ev.UserAgent, Verb: ev.Verb, Code: code}
		if o := ev.ObjectRef; o != nil {
			r.Resource = o.Resource
			if o.Subresource != "" {
				r.Resource += "/" + o.Subresource
			}
		} else {
			r.Resource = ev.RequestURI
		}
		seen[ev.AuditID] = len(reqs)
		reqs = append(reqs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	return reqs, nil
}

// CountRequests counts the requests received in [from, to) (a zero bound is open) by verb and
// resource.
func CountRequests(reqs []Request, from, to time.Time) map[RequestKey]int {
	n := map[RequestKey]int{}
	for _, r := range reqs {
		if (!from.IsZero() && r.Received.Before(from)) || (!to.IsZero() && !r.Received.Before(to)) {
			continue
		}
		n[RequestKey{r.Verb, r.Resource}]++
	}
	return n
}
