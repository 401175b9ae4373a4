package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
)

// Events iterates over the organization's events of the last 30 days,
// newest first, every page of it (listEvents), each rendered for the
// caller as the realtime channel renders it. Filters (may be nil) are sent
// unchanged with every page; its Cursor is ignored (the iterator sets it).
// Use an event's Discriminator and As… methods (AsPaymentUpdatedMessage,
// AsTransactionCreatedMessage, …) to read its data.
func (c *Client) Events(ctx context.Context, organizationID string, filters *api.ListEventsParams) iter.Seq2[api.Event, error] {
	var params api.ListEventsParams
	if filters != nil {
		params = *filters
	}
	return list[api.Event](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListEvents(ctx, org, &p)
	})
}

// Event reads one event of the organization (getEvent).
func (c *Client) Event(ctx context.Context, organizationID, eventID string) (*api.Event, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	id, err := parseUUID("event id", eventID)
	if err != nil {
		return nil, err
	}
	return decode[api.Event](c.raw.GetEvent(ctx, org, id, nil))
}

// Message is one message of the realtime channel as the server sent it:
// its id and type, and the whole JSON object (an api.Event, byte for byte:
// unmarshal Raw into one to read it, or forward Raw unchanged).
type Message struct {
	ID   string
	Type string
	Raw  json.RawMessage
}

// Follow waits before reconnecting: it starts at followRetryMin and
// doubles while reconnections keep failing, up to followRetryMax.
const (
	followRetryMin = 500 * time.Millisecond
	followRetryMax = 30 * time.Second
)

// maxMessage bounds one message of the realtime channel.
const maxMessage = 8 << 20

// Follow follows the organization's realtime channel (openRealtimeChannel,
// as server-sent events) and yields each message as it comes, starting
// after the message with id after ("" for what comes from now on). When
// the connection drops it connects again, naming the last message it
// received, so within the server's 24-hour replay window no message is
// missed or repeated. An answer that is not the stream (not signed in, a
// key without events:subscribe, an organization you cannot see) is yielded
// as an error and ends the iteration; so does ctx. Stopping the range
// closes the connection.
//
// The stream lasts: the client's http.Client must have no Timeout (give
// one with WithHTTP(&http.Client{})), or each connection ends after it.
func (c *Client) Follow(ctx context.Context, organizationID, after string, opts ...FollowOption) iter.Seq2[Message, error] {
	var o followOptions
	for _, opt := range opts {
		opt(&o)
	}
	return func(yield func(Message, error) bool) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			yield(Message{}, err)
			return
		}
		last := after
		wait := followRetryMin
		for {
			received, err := c.followOnce(ctx, org, last, o.connected, func(m Message) bool {
				last = m.ID
				return yield(m, nil)
			})
			var apiErr *Error
			switch {
			case errors.Is(err, errStopped):
				return
			case ctx.Err() != nil:
				yield(Message{}, ctx.Err())
				return
			case errors.As(err, &apiErr) && apiErr.StatusCode != http.StatusTooManyRequests && apiErr.StatusCode < 500:
				yield(Message{}, err)
				return
			}
			if received {
				wait = followRetryMin
			}
			if err := sleep(ctx, wait); err != nil {
				yield(Message{}, err)
				return
			}
			wait = min(2*wait, followRetryMax)
		}
	}
}

// FollowOption configures Follow.
type FollowOption func(*followOptions)

type followOptions struct{ connected func() }

// OnConnect calls f each time Follow's connection is open: the server
// delivers every message committed from then on (and, after a
// reconnection, what was missed).
func OnConnect(f func()) FollowOption { return func(o *followOptions) { o.connected = f } }

// errStopped: the consumer stopped the range.
var errStopped = errors.New("client: follow stopped")

// followOnce reads one connection of the channel until it ends, handing
// each message to deliver; received tells whether any came.
func (c *Client) followOnce(ctx context.Context, org uuid.UUID, after string, connected func(), deliver func(Message) bool) (received bool, err error) {
	params := &api.OpenRealtimeChannelParams{}
	if after != "" {
		id, err := parseUUID("event id", after)
		if err != nil {
			return false, err
		}
		params.LastEventID = &id
	}
	resp, err := c.raw.OpenRealtimeChannel(ctx, org, params, func(_ context.Context, req *http.Request) error {
		req.Header.Set("Accept", "text/event-stream")
		return nil
	})
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		if err := ErrorFromResponse(resp, body); err != nil {
			return false, err
		}
		return false, fmt.Errorf("strongroom: the realtime channel answered %d", resp.StatusCode)
	}
	if connected != nil {
		connected()
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var id string
	var data bytes.Buffer
	for {
		line, err := readLine(r)
		if err != nil {
			return received, err
		}
		switch {
		case len(line) == 0: // the end of an event
			if data.Len() == 0 {
				continue
			}
			var head struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			}
			raw := json.RawMessage(bytes.Clone(data.Bytes()))
			data.Reset()
			if err := json.Unmarshal(raw, &head); err != nil {
				return received, fmt.Errorf("strongroom: a realtime message that is not JSON: %w", err)
			}
			if head.ID == "" {
				head.ID = id
			}
			received = true
			if !deliver(Message{ID: head.ID, Type: head.Type, Raw: raw}) {
				return received, errStopped
			}
		case line[0] == ':': // a comment: keep-alive
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "id":
				id = string(value)
			case "data":
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				if data.Len()+len(value) > maxMessage {
					return received, errors.New("strongroom: a realtime message too large")
				}
				data.Write(value)
			}
		}
	}
}

// readLine reads one line of an event stream without its end (LF, CR LF
// or CR alone is not expected from this server), at most maxMessage bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, isPrefix, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, part...)
		if len(line) > maxMessage {
			return nil, errors.New("strongroom: a realtime line too long")
		}
		if !isPrefix {
			return line, nil
		}
	}
}
