package minikubelet_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/minikubelet/minikubelet"

// assembled are the constructors of the cores package kubelet assembles into one kubelet process,
// by import path: the pod sources, PodConfig and the plugin pipeline. A driver that calls one
// builds a second kubelet, and the two drift (docs/design/006-one-kubelet.md).
var assembled = map[string][]string{
	module + "/sources":               {"NewFile", "NewHTTP", "NewAPI"},
	module + "/podconfig":             {"New", "NewStorage"},
	module + "/plugins/pluginwatcher": {"New"},
	module + "/plugins/pluginmanager": {"New"},
	module + "/plugins/devicemanager": {"New", "NewHandler", "NewServer"},
	module + "/plugins/csiplugin":     {"New"},
}

// maxReplayImports bounds how many of the module's packages the replay engine imports: it drives
// the kubelet and simulates the world around it, and does not assemble either.
const maxReplayImports = 12

// goFile is one non-test Go file of the module.
type goFile struct {
	dir  string // relative to the module root, slash-separated
	file *ast.File
}

// moduleFiles parses the import declarations and bodies of every non-test Go file of the module,
// test modules and testdata aside.
func moduleFiles(t *testing.T) []goFile {
	t.Helper()
	var out []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || fileExists(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, goFile{dir: filepath.ToSlash(filepath.Dir(p)), file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestCoresAreAssembledOnce: outside their own packages, the source, PodConfig and plugin
// pipeline cores are constructed by package kubelet alone.
func TestCoresAreAssembledOnce(t *testing.T) {
	var offenders []string
	for _, f := range moduleFiles(t) {
		pkgPath := module
		if f.dir != "." {
			pkgPath = module + "/" + f.dir
		}
		if pkgPath == module+"/kubelet" {
			continue
		}
		// The local name of each restricted package this file imports.
		names := map[string]string{}
		for _, imp := range f.file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if _, ok := assembled[p]; !ok || p == pkgPath {
				continue
			}
			name := path.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = p
		}
		if len(names) == 0 {
			continue
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if p, ok := names[id.Name]; ok && slices.Contains(assembled[p], sel.Sel.Name) {
				offenders = append(offenders, f.dir+": "+path.Base(p)+"."+sel.Sel.Name)
			}
			return true
		})
	}
	sort.Strings(offenders)
	if len(offenders) > 0 {
		t.Errorf("cores constructed outside package kubelet (build them with kubelet.New):\n%s", strings.Join(offenders, "\n"))
	}
}

// TestReplayImports: the replay engine imports at most maxReplayImports of the module's packages.
func TestReplayImports(t *testing.T) {
	imports := map[string]bool{}
	for _, f := range moduleFiles(t) {
		if f.dir != "sim/replay" {
			continue
		}
		for _, imp := range f.file.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, module+"/") || p == module {
				imports[p] = true
			}
		}
	}
	if len(imports) == 0 {
		t.Fatal("found no import of sim/replay: is the test run from the module root?")
	}
	if len(imports) > maxReplayImports {
		list := make([]string, 0, len(imports))
		for p := range imports {
			list = append(list, strings.TrimPrefix(p, module+"/"))
		}
		sort.Strings(list)
		t.Errorf("sim/replay imports %d of the module's packages, want at most %d: %s", len(imports), maxReplayImports, strings.Join(list, ", "))
	}
}
