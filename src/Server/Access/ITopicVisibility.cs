using Laharsub.Server.Storage;

namespace Laharsub.Server.Access;

/// <summary>
/// Which topics a listing may show this request; access control sets it as a request feature when
/// the caller may not see every topic. Absent, every topic is shown.
/// </summary>
internal interface ITopicVisibility
{
    ValueTask<bool> IsVisibleAsync(TopicInfo topic);
}
