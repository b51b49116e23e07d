package docs

import (
	"regexp"
	"testing"
)

// releaseVersion matches a literal release version of KIM Snatch where a
// command or manifest names one: a release's tag, directory or download
// (snatch-webhook/v0.1.0), or the VERSION of make release. Versions of
// other software, such as bin/k8s-v1.36.3, and placeholders such as
// vX.Y.Z or $WEBHOOK_VERSION do not match.
var releaseVersion = regexp.MustCompile(`(?:(?:snatch-webhook|cabundle-syncer)/|VERSION=)v[0-9]+\.[0-9]+\.[0-9]+`)

// mayNameVersions are the documents whose code may name a release version,
// and why.
var mayNameVersions = map[string]string{
	"docs/releasing.md": "its examples cut, tag, upgrade and roll back a release by its version",
}

// No documented command or manifest names a literal release version, apart
// from mayNameVersions: a repair or an install that pins one downgrades a
// newer installation without a word. They name the version the operator
// installs, $WEBHOOK_VERSION or $SYNCER_VERSION set once, or vX.Y.Z.
func TestDocumentedCommandsNameNoReleaseVersion(t *testing.T) {
	for _, d := range installDocuments(t) {
		if mayNameVersions[d.path] != "" {
			continue
		}
		for _, l := range append(codeBlocks(d.text), inlineSpans(d.text)...) {
			if v := releaseVersion.FindString(l); v != "" {
				t.Errorf("%s: %q names the release version %s; use the version that is installed ($WEBHOOK_VERSION, $SYNCER_VERSION) or vX.Y.Z", d.path, l, v)
			}
		}
	}
}

func TestReleaseVersionPatternMatchesReleasesButNotVariablesOrPlaceholders(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		match      bool
	}{
		{name: "release_file_matches", line: "kubectl apply --server-side -f dist/snatch-webhook/v0.1.0/install.yaml", match: true},
		{name: "download_url_matches", line: "https://github.com/kyma-project/kim-snatch/releases/download/cabundle-syncer/v1.20.3/install.yaml", match: true},
		{name: "pre_release_tag_matches", line: "git tag snatch-webhook/v0.2.0-rc.1", match: true},
		{name: "make_release_matches", line: "make release BINARY=snatch-webhook VERSION=v0.1.0", match: true},
		{name: "overlay_resource_matches", line: "  - dist/cabundle-syncer/v0.1.0/install.yaml", match: true},
		{name: "variable_does_not_match", line: "kubectl apply --server-side -f dist/snatch-webhook/$WEBHOOK_VERSION/install.yaml"},
		{name: "braced_variable_does_not_match", line: "dist/cabundle-syncer/${SYNCER_VERSION}/install.yaml"},
		{name: "placeholder_does_not_match", line: "  - dist/snatch-webhook/vX.Y.Z/install.yaml"},
		{name: "other_software_does_not_match", line: "bin/k8s-v1.36.3/kube-apiserver"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := releaseVersion.MatchString(tt.line); got != tt.match {
				t.Errorf("releaseVersion matches %q: %v, want %v", tt.line, got, tt.match)
			}
		})
	}
}
