package replay

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// diffContext is how many unchanged lines a pod diff keeps around each change.
const diffContext = 2

// podDiffs remembers the last version of each pod handed to the sync loop, to tell what an UPDATE
// or RECONCILE changed (RunOptions.PodDiffs).
type podDiffs struct {
	last  map[types.UID][]string // the pod as YAML lines, by UID
	diffs map[uint64]string
}

// record notes the pods of update u, handed to the sync loop by the config event ev, and keeps
// the diff of each pod of an UPDATE or RECONCILE against its previous version.
func (d *podDiffs) record(ev trace.Event, u podconfig.Update) {
	var out []string
	for _, p := range u.Pods {
		lines := podLines(p)
		if prev, ok := d.last[p.UID]; ok && (u.Op == podconfig.UPDATE || u.Op == podconfig.RECONCILE) {
			if diff := lineDiff(prev, lines); diff != "" {
				out = append(out, "--- "+p.Namespace+"/"+p.Name+"\n"+diff)
			}
		}
		if u.Op == podconfig.REMOVE {
			delete(d.last, p.UID)
		} else {
			d.last[p.UID] = lines
		}
	}
	if len(out) > 0 {
		d.diffs[ev.Seq] = strings.Join(out, "\n")
	}
}

func podLines(p *v1.Pod) []string {
	b, err := yaml.Marshal(p)
	if err != nil {
		return []string{"# " + err.Error()}
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// lineDiff is a unified-style diff of two short texts (a pod is a few hundred lines): "-" and "+"
// lines with diffContext lines of context, hunks separated by "...". It is "" when they are equal.
func lineDiff(a, b []string) string {
	// The longest common subsequence, by dynamic programming from the ends.
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte // ' ', '-' or '+'
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			// Removals before additions, as unified diffs write them.
			lines = append(lines, line{'-', a[i]})
			i++
		default:
			lines = append(lines, line{'+', b[j]})
			j++
		}
	}
	keep := make([]bool, len(lines))
	changed := false
	for k, l := range lines {
		if l.op == ' ' {
			continue
		}
		changed = true
		for c := max(0, k-diffContext); c <= min(len(lines)-1, k+diffContext); c++ {
			keep[c] = true
		}
	}
	if !changed {
		return ""
	}
	var sb strings.Builder
	gap := false
	for k, l := range lines {
		if !keep[k] {
			gap = true
			continue
		}
		if gap && sb.Len() > 0 {
			sb.WriteString("...\n")
		}
		gap = false
		sb.WriteByte(l.op)
		sb.WriteString(l.text)
		sb.WriteByte('\n')
	}
	return strings.TrimSuffix(sb.String(), "\n")
}
