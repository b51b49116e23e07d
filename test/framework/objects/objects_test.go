package objects

import (
	"strings"
	"testing"
)

func TestDecodeSkipsEmptyDocumentsAndNamesTheOneThatFails(t *testing.T) {
	stream := "---\n# a comment alone\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n\n---\n" +
		`{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"}}` + "\n"
	objs, err := Decode([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	if strings.Join(got, " ") != "ConfigMap/a Secret/b" {
		t.Errorf("Decode = %v, want ConfigMap/a Secret/b in order", got)
	}
	if n := len(OfKind(objs, "Secret")); n != 1 {
		t.Errorf("OfKind(Secret) = %d objects, want 1", n)
	}

	_, err = Decode([]byte("kind: ConfigMap\n---\nkind: [unclosed\n"))
	if err == nil || !strings.Contains(err.Error(), "document 2") {
		t.Errorf("Decode of a broken second document: error %v, want one naming document 2", err)
	}
}
