using System.Net;
using System.Net.Sockets;

namespace Laharsub.Server.Limits;

/// <summary>What the per-client caps count by: the IPv4 address, or the /64 network of an IPv6 one.</summary>
internal static class ClientAddress
{
    /// <summary>The key for <paramref name="address"/>, or null (not counted) for a connection without one, such as a Unix socket.</summary>
    public static IPAddress? KeyOf(IPAddress? address)
    {
        if (address is null)
        {
            return null;
        }
        if (address.IsIPv4MappedToIPv6)
        {
            return address.MapToIPv4();
        }
        if (address.AddressFamily != AddressFamily.InterNetworkV6)
        {
            return address;
        }
        // One subscriber is usually given a whole /64 and picks interface identifiers at will.
        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        bytes[8..].Clear();
        return new IPAddress(bytes);
    }

    /// <summary>The address as the problem details and logs show it (IPv6 as its /64 network).</summary>
    public static string Describe(IPAddress key) =>
        key.AddressFamily == AddressFamily.InterNetworkV6 ? $"{key}/64" : key.ToString();
}
