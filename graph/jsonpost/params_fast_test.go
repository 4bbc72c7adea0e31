package jsonpost

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// decodeSlow is decodeBody's encoding/json path alone.
func decodeSlow(body []byte) (request, bool) {
	var req request
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil || firstByte(body[dec.InputOffset():]) != 0 {
		return req, false
	}
	return req, true
}

var fastSeeds = []string{
	`{"query":"query Q0 { __typename }"}`,
	"{\"query\":\"# Q1: one node with its properties.\\nquery Q1($id: ID!) {\\n  node(id: $id) {\\n    id\\n    properties\\n  }\\n}\\n\",\"variables\":{\"id\":\"n1234\"}}",
	` { "query" : "{ a }" , "operationName" : "A" , "variables" : { "x" : "y" , "z" : "w" } , "extensions" : null } `,
	`{"query":"{ a }","variables":null}`,
	`{"query":"{ a }","variables":{}}`,
	`{"query":"{ a }","variables":{"n":1,"f":1.50,"big":12345678901234567890,"o":{"a":[1,"x",null,true]}}}`,
	`{"query":"{ a }","variables":{"a":"1","a":"2"}}`,
	`{"query":"{ a }","variables":{"a":"\u00e9\n\"x\""}}`,
	`{"query":"{ a }","extensions":{"persistedQuery":{"version":1,"sha256Hash":"ab"}}}`,
	`{"query":"{ a }","query":"{ b }"}`,
	`{"Query":"{ a }"}`,
	`{"query":"{ a }","other":1}`,
	`{"query":"{ a }"} x`,
	`{"query":"{ a }",}`,
	`{"query":null}`,
	`{"query":1}`,
	`{"query":"a\tb"}`,
	`{"query":"a` + "\t" + `b"}`,
	`{"query":"{ a }","variables":[1]}`,
	`{"query":"{ a }","variables":"x"}`,
	`{"query":"{ a }","variables":{"a":1}}}`,
	`{"query":"{ a }","variables":{"a":[}}`,
	`{"query":"{ a }","variables":{"a":"}"}}`,
	`{"query":"\ud83d\ude00 \\ \/ \b\f\r"}`,
	`{}`,
	`{"variables":{"a":"b"}}`,
	`{"query":"{ a }","variables":nul}`,
	`{"query":"{ a }","variables":{"a":"b" "c":"d"}}`,
}

// TestDecodeFastAgreesWithEncodingJSON: on every body decodeFast takes,
// its parameters are encoding/json's; and it takes the usual ones.
func TestDecodeFastAgreesWithEncodingJSON(t *testing.T) {
	for _, body := range fastSeeds {
		checkFastAgrees(t, []byte(body))
	}
	for _, body := range fastSeeds[:5] {
		if _, ok := decodeFast([]byte(body)); !ok {
			t.Errorf("decodeFast does not take %s", body)
		}
	}
}

func FuzzDecodeFast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkFastAgrees(t, body) })
}

func checkFastAgrees(t *testing.T, body []byte) {
	t.Helper()
	if checkText(body) != nil {
		return // decodeBody refuses it before either
	}
	p, ok := decodeFast(body)
	if !ok {
		return
	}
	req, slowOK := decodeSlow(body)
	if !slowOK {
		t.Fatalf("decodeFast takes %q, encoding/json refuses it", body)
	}
	want := [4]any{req.Query, req.OperationName, req.Variables, req.Extensions}
	got := [4]any{p.Query, p.OperationName, p.Variables, p.Extensions}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decodeFast %#v, encoding/json %#v", body, got, want)
	}
}
