using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Xml.Linq;

/// <summary>
/// The IntelliSense file a package ships documents what its users can
/// call; mcs writes every member, internal ones too (the P/Invoke
/// declarations, the marshalling helpers). Used by scripts/lib/pack-dotnet.sh
/// and scripts/lib/test-nuget-consumer.sh:
///   PublicDocs.exe ASSEMBLY XML_IN XML_OUT   keeps the members visible outside ASSEMBLY
///   PublicDocs.exe --check ASSEMBLY XML      exit 1, listing members documented that users cannot see
/// A member is visible if it is public or protected in a type that is.
/// An ID this tool cannot resolve is an error in both modes, never dropped
/// or kept silently.
/// </summary>
static class PublicDocs
{
    static int Main(string[] args)
    {
        bool check = args.Length == 3 && args[0] == "--check";
        if (!check && args.Length != 3)
        {
            Console.Error.WriteLine("usage: PublicDocs.exe ASSEMBLY XML_IN XML_OUT | --check ASSEMBLY XML");
            return 2;
        }
        var assembly = Assembly.LoadFrom(check ? args[1] : args[0]);
        var doc = XDocument.Load(check ? args[2] : args[1]);
        var members = doc.Descendants("member").ToList();
        var hidden = new List<string>();
        var unresolved = new List<string>();
        foreach (var member in members)
        {
            var id = (string)member.Attribute("name");
            bool? visible = Visible(assembly, id);
            if (visible == null) unresolved.Add(id);
            else if (!visible.Value) hidden.Add(id);
        }
        foreach (var id in unresolved) Console.Error.WriteLine("public-docs: cannot resolve " + id);
        if (unresolved.Count > 0) return 1;
        if (check)
        {
            foreach (var id in hidden) Console.Error.WriteLine("public-docs: documents a member users cannot see: " + id);
            Console.WriteLine("public-docs: {0} members documented, {1} of them invisible to users", members.Count, hidden.Count);
            return hidden.Count == 0 ? 0 : 1;
        }
        var drop = new HashSet<string>(hidden);
        foreach (var member in members.Where(m => drop.Contains((string)m.Attribute("name")))) member.Remove();
        doc.Save(args[2]);
        Console.WriteLine("public-docs: kept {0} of {1} members", members.Count - hidden.Count, members.Count);
        return 0;
    }

    /// <summary>True or false for a documentation ID (T:, M:, P:, F:, E:), null if it names nothing in the assembly.</summary>
    static bool? Visible(Assembly assembly, string id)
    {
        if (id == null || id.Length < 3 || id[1] != ':') return null;
        string path = id.Substring(2);
        int paren = path.IndexOf('(');
        if (paren >= 0) path = path.Substring(0, paren);
        int tilde = path.IndexOf('~');
        if (tilde >= 0) path = path.Substring(0, tilde);
        if (id[0] == 'T')
        {
            var type = FindType(assembly, path);
            return type == null ? (bool?)null : TypeVisible(type);
        }
        int dot = path.LastIndexOf('.');
        if (dot < 0) return null;
        var owner = FindType(assembly, path.Substring(0, dot));
        if (owner == null) return null;
        if (!TypeVisible(owner)) return false;
        string name = path.Substring(dot + 1);
        int generic = name.IndexOf("``", StringComparison.Ordinal);
        if (generic >= 0) name = name.Substring(0, generic);
        // Explicit interface implementations (System#IDisposable#Dispose) are private.
        if (name.Contains('#') && name != "#ctor" && name != "#cctor") return false;
        name = name == "#ctor" ? ".ctor" : name == "#cctor" ? ".cctor" : name;
        var found = owner.GetMember(name, BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly);
        if (found.Length == 0) return null;
        return found.Any(MemberVisible);
    }

    /// <summary>A type by its documentation name, nested types written with dots.</summary>
    static Type FindType(Assembly assembly, string name)
    {
        var type = assembly.GetType(name);
        for (int dot = name.LastIndexOf('.'); type == null && dot > 0; dot = name.LastIndexOf('.', dot - 1))
        {
            var outer = FindType(assembly, name.Substring(0, dot));
            if (outer != null) type = outer.GetNestedType(name.Substring(dot + 1), BindingFlags.Public | BindingFlags.NonPublic);
        }
        return type;
    }

    static bool TypeVisible(Type type)
    {
        if (!type.IsNested) return type.IsPublic;
        return (type.IsNestedPublic || type.IsNestedFamily || type.IsNestedFamORAssem) && TypeVisible(type.DeclaringType);
    }

    static bool MemberVisible(MemberInfo member)
    {
        var method = member as MethodBase;
        if (method != null) return method.IsPublic || method.IsFamily || method.IsFamilyOrAssembly;
        var field = member as FieldInfo;
        if (field != null) return field.IsPublic || field.IsFamily || field.IsFamilyOrAssembly;
        var property = member as PropertyInfo;
        if (property != null) return property.GetAccessors(true).Any(MemberVisible);
        var evnt = member as EventInfo;
        if (evnt != null) return MemberVisible(evnt.GetAddMethod(true));
        var type = member as Type;
        if (type != null) return TypeVisible(type);
        return false;
    }
}
