namespace Laharsub.Server.Access;

/// <summary>Which permission an endpoint needs; attached to each Laharsub endpoint as metadata in Jwt mode.</summary>
internal enum AccessRule
{
    /// <summary>An endpoint no rule covers: refused, so that a new endpoint is closed until someone decides who may use it.</summary>
    Unclassified,

    /// <summary><c>POST /topics</c>: <c>create</c> on the requested label.</summary>
    CreateTopic,

    /// <summary><c>GET /topics</c>: <c>list</c>; the page shows only the topics the caller may list.</summary>
    ListTopics,

    /// <summary><c>GET /topics/{id}</c>: <c>list</c> or <c>subscribe</c> on the topic.</summary>
    TopicInfo,

    /// <summary><c>POST /topics/{id}</c>: <c>publish</c> on the topic.</summary>
    Publish,

    /// <summary><c>POST /topics/publish?topics=...</c>: <c>publish</c> on every topic named.</summary>
    PublishMany,

    /// <summary><c>DELETE /topics/{id}</c>: <c>delete</c> on the topic.</summary>
    DeleteTopic,

    /// <summary><c>GET /subscriptions</c>: <c>subscribe</c> on every topic of the poll.</summary>
    Poll,

    /// <summary><c>GET /topics/{id}/presence</c>: <c>subscribe</c> (the occupancy) or <c>presence</c> (the members too) on the topic.</summary>
    Presence,

    /// <summary><c>GET /topics/{id}/state</c>: <c>subscribe</c> on the topic (the document is what its messages make).</summary>
    State,

    /// <summary>The standalone server's admin data (<c>/admin/stats</c>): <c>admin</c>.</summary>
    Admin,
}
