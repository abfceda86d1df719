using System.Buffers.Text;
using System.Text.Json;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>Laharsub's wire protocol (docs/protocol.md): REST publish, one multiplexed long poll with cursors in the query.</summary>
internal sealed class LaharsubProtocol(LoadPlan plan) : TargetProtocol
{
    public override Uri PollAddressAt(Uri apiAddress) => new(apiAddress, "subscriptions");

    public override bool ConsecutiveMessageIds => true;

    public override string? PublishAccept => null;

    public override string PublishPath(long topicId) => $"topics/{topicId}";

    public override bool IsPublishAccepted(int status) => status == 201;

    public override long ReadPublishedId(ReadOnlySpan<byte> answer)
    {
        var reader = new Utf8JsonReader(answer);
        while (reader.Read())
        {
            if (reader.TokenType == JsonTokenType.PropertyName && reader.ValueTextEquals("messageId"u8) && reader.Read())
            {
                return reader.GetInt64();
            }
        }
        throw new JsonException("The publish answer has no messageId.");
    }

    public override IPollWire CreatePollWire(IReadOnlyList<DeliveryVerifier> topics) => new Wire(topics, plan.PollTimeoutSeconds, plan.Format);

    /// <summary>
    /// <c>timeout=30&amp;topics=14:3~9f3c0a1b2c3d4e5f,15:9</c>: every subscribed topic with its cursor and,
    /// once an answer has named it, its epoch, in the compact form (as the .NET client sends them).
    /// </summary>
    private sealed class Wire(IReadOnlyList<DeliveryVerifier> topics, int pollTimeoutSeconds, WireFormatKind format) : IPollWire
    {
        private byte[] _scratch = new byte[64];

        public string Accept => format == WireFormatKind.Json ? "application/json" : "multipart/mixed";

        public bool IsEmpty(int status) => status == 204;

        public bool TryWriteQuery(Span<byte> destination, out int written)
        {
            written = 0;
            if (!Append(destination, ref written, "timeout="u8) || !Append(destination, ref written, pollTimeoutSeconds)
                || !Append(destination, ref written, "&topics="u8))
            {
                return false;
            }
            for (var i = 0; i < topics.Count; i++)
            {
                if ((i > 0 && !Append(destination, ref written, ","u8))
                    || !Append(destination, ref written, topics[i].TopicId)
                    || !Append(destination, ref written, ":"u8)
                    || !Append(destination, ref written, topics[i].Next)
                    || (!topics[i].Epoch.IsEmpty && (!Append(destination, ref written, "~"u8) || !Append(destination, ref written, topics[i].Epoch))))
                {
                    return false;
                }
            }
            return true;
        }

        public bool TryWriteHeaders(Span<byte> destination, out int written)
        {
            written = 0;
            return true;
        }

        public void Read(in RawPollResponse response, IPollResponseSink sink)
        {
            if (format == WireFormatKind.Json)
            {
                PollResponseReader.ReadJson(response.Body, sink, ref _scratch);
            }
            else
            {
                PollResponseReader.ReadMultipart(response.Body, PollResponseReader.BoundaryOf(response.ContentType), sink);
            }
        }

        private static bool Append(Span<byte> destination, ref int written, ReadOnlySpan<byte> text)
        {
            if (!text.TryCopyTo(destination[written..]))
            {
                return false;
            }
            written += text.Length;
            return true;
        }

        private static bool Append(Span<byte> destination, ref int written, long number)
        {
            if (!Utf8Formatter.TryFormat(number, destination[written..], out var count))
            {
                return false;
            }
            written += count;
            return true;
        }
    }
}
