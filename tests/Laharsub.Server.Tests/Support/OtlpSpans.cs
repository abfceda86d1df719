using System.Text;

namespace Laharsub.Server.Tests.Support;

/// <summary>A span as an OTLP export carries it: ids as raw bytes, its name, and the spans it links to.</summary>
public sealed record OtlpSpan(byte[] TraceId, byte[] SpanId, string Name, List<(byte[] TraceId, byte[] SpanId)> Links)
{
    /// <summary>
    /// The spans of an OTLP/HTTP protobuf <c>ExportTraceServiceRequest</c>, read with the few rules of the
    /// protobuf wire format that it needs (tags, varints, length-delimited fields), so that a test checks
    /// links without a protobuf dependency: request.resource_spans (1) → scope_spans (2) → spans (2), whose
    /// trace_id is 1, span_id 2, name 5 and links 13 (each with trace_id 1 and span_id 2).
    /// </summary>
    public static List<OtlpSpan> Parse(byte[] request)
    {
        var spans = new List<OtlpSpan>();
        foreach (var resourceSpans in Fields(request, 1))
        {
            foreach (var scopeSpans in Fields(resourceSpans, 2))
            {
                foreach (var span in Fields(scopeSpans, 2))
                {
                    spans.Add(new OtlpSpan(Field(span, 1), Field(span, 2), Encoding.UTF8.GetString(Field(span, 5)),
                        [.. Fields(span, 13).Select(link => (Field(link, 1), Field(link, 2)))]));
                }
            }
        }
        return spans;
    }

    private static byte[] Field(byte[] message, int number) => Fields(message, number).FirstOrDefault() ?? [];

    /// <summary>The values of the length-delimited fields numbered <paramref name="number"/>; other fields are skipped.</summary>
    private static List<byte[]> Fields(byte[] message, int number)
    {
        var values = new List<byte[]>();
        var position = 0;
        while (position < message.Length)
        {
            var tag = Varint(message, ref position);
            var wireType = (int)(tag & 7);
            switch (wireType)
            {
                case 0:
                    Varint(message, ref position);
                    break;
                case 1:
                    position += 8;
                    break;
                case 2:
                    var length = (int)Varint(message, ref position);
                    if ((int)(tag >> 3) == number)
                    {
                        values.Add(message[position..(position + length)]);
                    }
                    position += length;
                    break;
                case 5:
                    position += 4;
                    break;
                default:
                    throw new InvalidDataException($"wire type {wireType} at byte {position}: not an OTLP message");
            }
        }
        return values;
    }

    private static ulong Varint(byte[] message, ref int position)
    {
        ulong value = 0;
        for (var shift = 0; ; shift += 7)
        {
            var b = message[position++];
            value |= (ulong)(b & 0x7f) << shift;
            if (b < 0x80)
            {
                return value;
            }
        }
    }
}
