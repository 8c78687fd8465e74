package teach

import (
	_ "embed"
	"fmt"
	"html"
	"io"
	"strings"
)

// The page and its assets are embedded, so that a report is one file that opens with no network.
var (
	//go:embed assets/view.html
	viewHTML string
	//go:embed assets/view.css
	viewCSS string
	//go:embed assets/view.js
	viewJS string
)

// WriteHTML writes the timeline as one self-contained HTML page.
func WriteHTML(w io.Writer, tl *Timeline) error {
	data, err := tl.JSON()
	if err != nil {
		return err
	}
	return writePage(w, tl.Name, data)
}

func writePage(w io.Writer, title string, data []byte) error {
	// The data is JSON with <, > and & escaped, so it cannot close the script element; the
	// assets are ours and hold no "</script".
	page := strings.NewReplacer(
		"{{TITLE}}", html.EscapeString(title),
		"{{CSS}}", viewCSS,
		"{{JS}}", viewJS,
		"{{DATA}}", string(data),
	).Replace(viewHTML)
	if _, err := io.WriteString(w, page); err != nil {
		return fmt.Errorf("write timeline page %s: %w", title, err)
	}
	return nil
}
