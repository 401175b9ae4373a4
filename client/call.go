package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
)

// maxAnswer bounds the body read from one answer: the largest JSON the API
// answers (a page of 100 records) is far below it, and a broken or hostile
// server cannot make the client hold more.
const maxAnswer = 32 << 20

// read reads the answer of a low-level call and turns a failure status into
// an [*Error].
func read(resp *http.Response, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(resp, body); err != nil {
		return nil, err
	}
	return body, nil
}

// decode reads the answer of a low-level call: a failure as an [*Error], a
// success decoded into a T.
func decode[T any](resp *http.Response, err error) (*T, error) {
	body, err := read(resp, err)
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("strongroom: %s %s answered %d with a body that is not the documented one: %w",
			resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, err)
	}
	return v, nil
}

// done reads the answer of a low-level call that answers no body (204).
func done(resp *http.Response, err error) error {
	_, err = read(resp, err)
	return err
}

// list walks a list whose pages fetch gets (fetch sets the cursor it is
// given on the call), decoding each page's data as Ts; see pages.
func list[T any](ctx context.Context, fetch func(ctx context.Context, cursor *string) (*http.Response, error)) iter.Seq2[T, error] {
	return pages(ctx, func(ctx context.Context, cursor *string) (page[T], error) {
		p, err := decode[struct {
			Data       []T     `json:"data"`
			HasMore    bool    `json:"has_more"`
			NextCursor *string `json:"next_cursor"`
		}](fetch(ctx, cursor))
		if err != nil {
			return page[T]{}, err
		}
		return page[T]{items: p.Data, hasMore: p.HasMore, next: p.NextCursor}, nil
	})
}

// stream hands over the body of a successful answer unread, with its
// Content-Type; a failure is read and returned as an [*Error].
func stream(resp *http.Response, err error) (io.ReadCloser, string, error) {
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode >= 400 {
		return nil, "", done(resp, nil)
	}
	return resp.Body, resp.Header.Get("Content-Type"), nil
}
