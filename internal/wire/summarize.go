package wire

import (
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

// ToProtoSummarizeRequest converts a summarize request to its wire
// message (session and binding are the caller's to set). The caller's
// key (sdk.SummarizeRequest.Key) never goes on the wire.
func ToProtoSummarizeRequest(r sdk.SummarizeRequest) *pb.SummarizeRequest {
	msgs := make([]*pb.Message, len(r.Messages))
	for i := range r.Messages {
		msgs[i] = toProtoMessage(&r.Messages[i])
	}
	return &pb.SummarizeRequest{Messages: msgs, Previous: r.Previous, MaxTokens: int64(r.MaxTokens), Encoding: r.Encoding}
}

// FromProtoSummarizeRequest converts a wire summarize request back.
func FromProtoSummarizeRequest(r *pb.SummarizeRequest) sdk.SummarizeRequest {
	msgs := make([]sdk.Message, len(r.GetMessages()))
	for i, m := range r.GetMessages() {
		msgs[i] = fromProtoMessage(m)
	}
	return sdk.SummarizeRequest{Messages: msgs, Previous: r.GetPrevious(), MaxTokens: int(r.GetMaxTokens()), Encoding: r.GetEncoding()}
}

// ToProtoSummarizeResponse converts a summary to its wire message.
func ToProtoSummarizeResponse(r sdk.SummarizeResult) *pb.SummarizeResponse {
	return &pb.SummarizeResponse{Text: r.Text, Model: r.Model, InputTokens: int64(r.InputTokens), OutputTokens: int64(r.OutputTokens)}
}

// FromProtoSummarizeResponse converts a wire summary back.
func FromProtoSummarizeResponse(r *pb.SummarizeResponse) sdk.SummarizeResult {
	return sdk.SummarizeResult{Text: r.GetText(), Model: r.GetModel(), InputTokens: int(r.GetInputTokens()), OutputTokens: int(r.GetOutputTokens())}
}
