using ZooLock.Native;

namespace ZooLock
{
    /// <summary>Whose naming a lock node follows (the core's <c>Scheme</c>).</summary>
    public enum ZooKeeperNamingScheme
    {
        /// <summary>kazoo's, which zoolock follows by default: <c>&lt;uuid hex&gt;__lock__&lt;seq&gt;</c>.</summary>
        Kazoo = NativeMethods.ZL_SCHEME_KAZOO,
        /// <summary>Curator's: <c>_c_&lt;uuid&gt;-lock-&lt;seq&gt;</c>.</summary>
        Curator = NativeMethods.ZL_SCHEME_CURATOR,
        /// <summary>Neither: another client's marker.</summary>
        Other = NativeMethods.ZL_SCHEME_OTHER,
    }
}
